import { connect, createServer, type Server, type Socket } from "node:net";

/**
 * A TCP load balancer in front of several backends, as a cluster's frontends
 * sit behind one in production: each new connection goes to the next backend
 * in turn, skipping those that refuse it. Connections to a backend that dies
 * break, and their clients reconnect through the balancer to a live one.
 */
export class TcpBalancer {
  private server!: Server;
  private next = 0;
  private readonly sockets = new Set<Socket>();
  address = "";

  constructor(private readonly backends: string[]) {}

  /** Listens on `port` (a free one when 0). */
  async start(listenPort = 0): Promise<this> {
    this.server = createServer((client) => this.route(client, 0));
    await new Promise<void>((resolve) => this.server.listen(listenPort, "127.0.0.1", resolve));
    const { port } = this.server.address() as { port: number };
    this.address = `127.0.0.1:${port}`;
    return this;
  }

  private route(client: Socket, tried: number): void {
    if (tried === this.backends.length) return void client.destroy();
    const [host, port] = this.backends[this.next++ % this.backends.length]!.split(":");
    client.pause();
    const upstream = connect({ host: host!, port: Number(port) });
    upstream.once("error", () => {
      if (!upstream.readyState.startsWith("open")) this.route(client, tried + 1);
    });
    upstream.once("connect", () => {
      for (const s of [client, upstream]) {
        this.sockets.add(s);
        s.once("close", () => this.sockets.delete(s));
        s.on("error", () => {});
      }
      client.pipe(upstream).pipe(client);
      client.once("close", () => upstream.destroy());
      upstream.once("close", () => client.destroy());
      client.resume();
    });
  }

  async stop(): Promise<void> {
    for (const s of this.sockets) s.destroy();
    await new Promise((resolve) => this.server.close(resolve));
  }
}
