import type { EgressPolicy } from "../core/egress-policy.js";
import { validation } from "./errors.js";

/**
 * An endpoint (or an OAuth token URL, `field` names which) as stored: an absolute http(s)
 * URL without credentials. With an egress policy, an address literal the policy denies is
 * refused too (names are checked when a send resolves them).
 */
export function checkEndpoint(endpoint: string, egress?: EgressPolicy, field = "endpoint"): string {
  let url: URL;
  try {
    url = new URL(endpoint);
  } catch {
    throw validation(`${field} must be an absolute http(s) URL, got ${JSON.stringify(endpoint)}`);
  }
  if (url.protocol !== "http:" && url.protocol !== "https:") {
    throw validation(`${field} must use http or https, got ${JSON.stringify(url.protocol.slice(0, -1))}`);
  }
  if (url.username || url.password) throw validation(`${field} must not carry credentials in the URL`);
  const denied = egress?.literalReason(url);
  if (denied) throw validation(`${field} is refused by the egress policy: ${denied}`);
  return url.toString();
}
