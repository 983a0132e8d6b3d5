// One method's HTTP/2 streams taken out of grpc-js's hands on grpc-js's own listeners.
// grpc-js keeps the listener, the sessions and everything it does per connection (TLS and
// certificate reloads, connection ageing, keepalive, shutdown) and every other method
// (health, reflection, UNIMPLEMENTED for unknown paths); the taken streams never reach its
// per-call machinery. grpc-js makes each listener's node:http2 server in
// `createHttp2Server` (not in its typings: an internal of the installed 1.14), which is
// wrapped here so that the route is in place before the server listens. Without it the
// service refuses to start on the fast path rather than serve without it.

import type http2 from "node:http2";
import type * as grpc from "@grpc/grpc-js";

export type StreamHandler = (stream: http2.ServerHttp2Stream, headers: http2.IncomingHttpHeaders) => void;

interface Http2ServerFactory {
  createHttp2Server(credentials: grpc.ServerCredentials): http2.Http2Server;
}

/** Sends the streams of `path` to `handle` on every listener `server` binds from now on. */
export function routeStreams(server: grpc.Server, path: string, handle: StreamHandler): void {
  const factory = server as unknown as Http2ServerFactory;
  const create = factory.createHttp2Server;
  if (typeof create !== "function") {
    throw new Error(
      "this @grpc/grpc-js has no createHttp2Server to serve ShouldRateLimit beside it: set GRPC_SERVER=grpc-js",
    );
  }
  factory.createHttp2Server = function (this: grpc.Server, credentials: grpc.ServerCredentials) {
    const h2 = create.call(this, credentials);
    const grpcJs = h2.listeners("stream") as ((...args: unknown[]) => void)[];
    h2.removeAllListeners("stream");
    h2.on(
      "stream",
      (stream: http2.ServerHttp2Stream, headers: http2.IncomingHttpHeaders, ...rest: unknown[]) => {
        if (headers[":path"] === path) handle(stream, headers);
        else for (const listener of grpcJs) listener.call(h2, stream, headers, ...rest);
      },
    );
    return h2;
  };
}
