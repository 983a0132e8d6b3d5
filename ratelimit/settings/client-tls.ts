import { readFileSync } from "node:fs";
import type { ConnectionOptions } from "node:tls";

/** The TLS settings a Redis (KVSTORE_TLS*) or memcached (OBJCACHE_TLS*) connection takes. */
export interface ClientTlsSettings {
  tls: boolean;
  tlsCaCert: string;
  tlsClientCert: string;
  tlsClientKey: string;
  tlsSkipHostnameVerification: boolean;
}

/** Options for `tls.connect`, or undefined for plain TCP; files are read once, at start. */
export function clientTlsOptions(s: ClientTlsSettings): ConnectionOptions | undefined {
  if (!s.tls) return undefined;
  const tls: ConnectionOptions = {};
  if (s.tlsCaCert) tls.ca = readFileSync(s.tlsCaCert);
  if (s.tlsClientCert) tls.cert = readFileSync(s.tlsClientCert);
  if (s.tlsClientKey) tls.key = readFileSync(s.tlsClientKey);
  // The certificate chain is still checked; only the name in it is not.
  if (s.tlsSkipHostnameVerification) tls.checkServerIdentity = () => undefined;
  return tls;
}
