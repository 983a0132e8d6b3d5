import type { RequestHandler } from "express";
import { tenantScopeOf } from "./tenant-scope.js";

// A tenant (its scoped token or its portal session) sets its endpoints' URLs, so the
// errors of its sends must not tell it what the deployment's network looks like: the
// address a name resolved to, which internal address refused or accepted a connection, what
// the egress policy denied. For tenant-scoped callers every address literal in the error
// fields of an answer, and in an attempt's excerpt of the endpoint's answer, is withheld; the operator's deployment-wide tokens see them whole.

/** Fields of API answers that carry a send's or a recovery's error text. */
const ERROR_FIELDS = new Set(["error", "reason", "lastError", "lastReplayError"]);

const IPV4 = /\b(?:\d{1,3}\.){3}\d{1,3}(?::\d{1,5})?\b/g;
// Candidates for IPv6, bracketed or bare, with a port; only those with a "::" or all eight
// groups are addresses (a time such as 12:30:45 is not).
const IPV6 = /\[?(?:[0-9a-f]{0,4}:){2,7}[0-9a-f]{0,4}(?:%\w+)?\]?(?::\d{1,5})?/gi;
const isIpv6 = (m: string) => m.includes("::") || (m.replace(/\].*$/, "").match(/:/g) ?? []).length === 7;

export const WITHHELD = "[address withheld]";

/** The error text with every address literal replaced. */
export const withoutAddresses = (text: string): string =>
  text.replace(IPV4, WITHHELD).replace(IPV6, (m) => (isIpv6(m) ? WITHHELD : m));

/** `all`: within an attempt's excerpt of its endpoint's answer (`response`), where every string is redacted. */
function redact(value: unknown, all = false): unknown {
  if (typeof value === "string") return all ? withoutAddresses(value) : value;
  if (Array.isArray(value)) return value.map((v) => redact(v, all));
  if (value === null || typeof value !== "object") return value;
  return Object.fromEntries(
    Object.entries(value).map(([k, v]) => [
      k,
      ERROR_FIELDS.has(k) && typeof v === "string" ? withoutAddresses(v) : redact(v, all || k === "response"),
    ]),
  );
}

/** Mounted before the routes: tenant-scoped answers go out with the error fields' addresses withheld. */
export const tenantRedaction: RequestHandler = (_req, res, next) => {
  const json = res.json.bind(res);
  res.json = (body?: unknown) => json(tenantScopeOf(res) ? redact(body) : body);
  next();
};
