import { createServer, type IncomingHttpHeaders, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { verifySignature } from "../../activities/signature.js";

export interface Received {
  path: string;
  headers: IncomingHttpHeaders;
  body: string;
  at: number;
}

/** True when the request carries a valid signature of its exact body with `secret`. */
export const signedWith = (secret: string, r: Received): boolean =>
  verifySignature(
    secret,
    {
      id: String(r.headers["svc-webhook-id"]),
      timestamp: String(r.headers["svc-webhook-timestamp"]),
      signature: String(r.headers["svc-webhook-signature"]),
    },
    r.body,
  );

/** A real HTTP endpoint for deliveries: records every request, answers with `respond`. */
export class Receiver {
  readonly requests: Received[] = [];
  respond: (req: Received, res: ServerResponse) => void = (_req, res) => res.writeHead(200).end("ok");
  private server!: Server;
  private waiters: { count: number; resolve: () => void }[] = [];
  url = "";

  async start(): Promise<this> {
    this.server = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on("data", (c) => chunks.push(c));
      req.on("end", () => {
        const received = {
          path: req.url ?? "/",
          headers: req.headers,
          body: Buffer.concat(chunks).toString("utf8"),
          at: Date.now(),
        };
        this.requests.push(received);
        this.respond(received, res);
        for (const w of this.waiters.filter((w) => this.requests.length >= w.count)) w.resolve();
        this.waiters = this.waiters.filter((w) => this.requests.length < w.count);
      });
    });
    await new Promise<void>((resolve) => this.server.listen(0, "127.0.0.1", resolve));
    this.url = `http://127.0.0.1:${(this.server.address() as AddressInfo).port}/hook`;
    return this;
  }

  /** Resolves once `count` requests arrived in total. */
  waitFor(count: number, timeoutMs = 30_000): Promise<void> {
    if (this.requests.length >= count) return Promise.resolve();
    return new Promise((resolve, reject) => {
      const timer = setTimeout(
        () => reject(new Error(`expected ${count} requests, got ${this.requests.length}`)),
        timeoutMs,
      );
      this.waiters.push({
        count,
        resolve: () => {
          clearTimeout(timer);
          resolve();
        },
      });
    });
  }

  stop(): Promise<void> {
    // Never started (a before hook failed first): nothing to close.
    if (!this.server) return Promise.resolve();
    this.server.closeAllConnections();
    return new Promise((resolve) => this.server.close(() => resolve()));
  }
}
