import { isIP } from "node:net";
import type { RequestHandler } from "express";
import { sendError } from "./errors.js";

// With authentication off, any web page a developer opens could reach the API through a
// name the attacker controls that resolves to 127.0.0.1 (DNS rebinding): the browser then
// sends that name as Host. Only names that cannot be rebound are answered: IP literals,
// localhost, the listen host, and the host of --portal-base-url (and no Host at all).

/** The host of a Host header value, without the port and the brackets of an IPv6 literal. */
function hostname(header: string): string {
  const v = header.trim().toLowerCase();
  if (v.startsWith("[")) return v.slice(1, v.indexOf("]") > 0 ? v.indexOf("]") : undefined);
  const colon = v.lastIndexOf(":");
  return colon >= 0 && v.indexOf(":") === colon ? v.slice(0, colon) : v;
}

export function hostCheck(listenHost: string, portalBaseUrl: string | undefined): RequestHandler {
  const named = new Set(["localhost", listenHost.toLowerCase()]);
  if (portalBaseUrl) named.add(new URL(portalBaseUrl).hostname.toLowerCase());
  return (req, res, next) => {
    const host = hostname(req.headers.host ?? "");
    // No Host at all (HTTP/1.0 probes) comes from no browser: nothing to rebind.
    if (host === "" || isIP(host) || named.has(host) || host.endsWith(".localhost")) return next();
    sendError(
      res,
      421,
      "FORBIDDEN",
      `Host ${JSON.stringify(host.slice(0, 200))} is not this API's: with authentication off only IP addresses, localhost, the listen host and the --portal-base-url host are answered (DNS rebinding)`,
    );
  };
}
