import type { RequestListener, Server } from "node:http";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import type { ListenAddress } from "./flags.js";

export interface RunningServer {
  server: Server;
  port: number;
  close(): Promise<void>;
}

/** True for a listen host or peer address of this machine only (127.0.0.0/8, ::1, localhost, IPv4-mapped). */
export const isLoopback = (host: string): boolean =>
  host === "localhost" || host === "::1" || /^(::ffff:)?127\.\d+\.\d+\.\d+$/i.test(host);

/** Listens, and closes gracefully: stops accepting, lets in-flight requests finish. */
export async function listen(app: RequestListener, address: ListenAddress): Promise<RunningServer> {
  const server = createServer(app);
  await new Promise<void>((resolve, reject) => {
    server.once("error", (err: NodeJS.ErrnoException) =>
      reject(
        err.code === "EADDRINUSE"
          ? new Error(`address ${address.host}:${address.port} is already in use`)
          : err,
      ),
    );
    server.listen(address.port, address.host, resolve);
  });
  return {
    server,
    port: (server.address() as AddressInfo).port,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeIdleConnections();
      }),
  };
}
