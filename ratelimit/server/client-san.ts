// GRPC_CLIENT_TLS_SAN: with mutual TLS, only clients whose certificate carries this
// DNS name among its subject alternative names may call. Node's TLS server has no
// hook into certificate verification, so the check runs on every call (a server
// interceptor) and refuses the call with UNAUTHENTICATED before any handler runs.

import type { PeerCertificate } from "node:tls";
import * as grpc from "@grpc/grpc-js";
import type { Logger } from "../../common/logger.js";

/** The DNS names of `subjectaltname` ("DNS:a, IP Address:1.2.3.4, DNS:b"). */
export function dnsNames(cert: PeerCertificate | undefined): string[] {
  const san = cert?.subjectaltname;
  if (!san) return [];
  return san
    .split(/,\s*/)
    .filter((entry) => entry.startsWith("DNS:"))
    .map((entry) => entry.slice(4));
}

export function clientSanInterceptor(san: string, logger: Logger): grpc.ServerInterceptor {
  const wanted = san.toLowerCase();
  return (method, call) =>
    new grpc.ServerInterceptingCall(call, {
      start(next) {
        next({
          onReceiveMetadata(metadata, nextMetadata) {
            const names = dnsNames(call.getAuthContext().sslPeerCertificate);
            if (names.some((n) => n.toLowerCase() === wanted)) {
              nextMetadata(metadata);
              return;
            }
            logger.debug({ peer: call.getPeer(), method: method.path, names }, "client certificate refused");
            call.sendStatus({
              code: grpc.status.UNAUTHENTICATED,
              details: `client certificate does not carry the DNS name ${san} (GRPC_CLIENT_TLS_SAN)`,
            });
          },
        });
      },
    });
}
