import { readFile } from "node:fs/promises";
import type { TLSConfig } from "@temporalio/client";

/** How to reach a Temporal cluster: the dev server by default, a real cluster by flags. */
export interface TemporalOptions {
  address: string;
  namespace: string;
  tls: boolean;
  tlsCert?: string;
  tlsKey?: string;
  tlsCa?: string;
  tlsServerName?: string;
  apiKey?: string;
}

/** TLS settings shared by the client and worker connections, from file paths. */
export async function temporalTls(opts: TemporalOptions): Promise<TLSConfig | undefined> {
  if (!opts.tls && !opts.tlsCert && !opts.tlsCa) return undefined;
  if (Boolean(opts.tlsCert) !== Boolean(opts.tlsKey)) {
    throw new Error("--temporal-tls-cert and --temporal-tls-key must be given together");
  }
  const tls: TLSConfig = {};
  if (opts.tlsServerName) tls.serverNameOverride = opts.tlsServerName;
  if (opts.tlsCa) tls.serverRootCACertificate = await readFile(opts.tlsCa);
  if (opts.tlsCert && opts.tlsKey) {
    tls.clientCertPair = { crt: await readFile(opts.tlsCert), key: await readFile(opts.tlsKey) };
  }
  return tls;
}
