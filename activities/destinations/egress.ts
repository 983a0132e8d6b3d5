import type { LookupAddress } from "node:dns";
import { isIP } from "node:net";
import { EgressDenied, type EgressPolicy } from "../../core/egress-policy.js";

// The egress policy (core/egress-policy.ts) applied to a broker's addresses as to an HTTP
// endpoint's: each name resolved through the policy's lookup, so a broker name pointing at
// a denied address (the metadata service, a private range in production) is refused before
// any connection. The drivers also connect through the policy's lookup, so a broker the
// client discovers later (Kafka's advertised listeners) is checked when it connects.

/** host:port split; a bracketed IPv6 host loses its brackets. */
export function splitHostPort(address: string): { host: string; port: number } {
  const m = /^\[?([^\]]*?)\]?:(\d+)$/.exec(address);
  if (!m) throw new Error(`${JSON.stringify(address)} is not host:port`);
  return { host: m[1]!, port: Number(m[2]) };
}

/** The allowed addresses `host` resolves to (itself when it is an address the policy allows); EgressDenied otherwise. */
export async function allowedAddresses(egress: EgressPolicy, host: string): Promise<string[]> {
  if (isIP(host)) {
    const why = egress.reason(host);
    if (why) throw new EgressDenied(`egress policy: ${why}`);
    return [host];
  }
  return new Promise((resolve, reject) => {
    egress.lookup(host, { all: true }, (err, addresses) => {
      if (err) reject(err);
      else resolve((addresses as unknown as LookupAddress[]).map((a) => a.address));
    });
  });
}

/** Throws EgressDenied (or the DNS error) unless every host:port of `addresses` may be reached. */
export async function checkEgress(egress: EgressPolicy, addresses: readonly string[]): Promise<void> {
  for (const a of addresses) await allowedAddresses(egress, splitHostPort(a).host);
}
