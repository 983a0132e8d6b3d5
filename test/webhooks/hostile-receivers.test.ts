import { readFileSync } from "node:fs";
import { createServer as createHttpServer, type Server } from "node:http";
import { createServer as createTcpServer, type Server as TcpServer } from "node:net";
import { expect } from "chai";
import { startWebhooks, type WebhooksUnderTest } from "../support/webhooks-server.js";

const listen = async <S extends Server | TcpServer>(server: S): Promise<{ server: S; url: string }> => {
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return { server, url: `http://127.0.0.1:${(server.address() as { port: number }).port}/hook` };
};

const rssKb = (pid: number) => Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, "utf8"))![1]);

/** Endpoints that misbehave: each send stays bounded in time and memory and is classified right. */
describe("sending to hostile receivers (real sockets)", function () {
  this.timeout(120_000);
  let api: WebhooksUnderTest;
  const servers: (Server | TcpServer)[] = [];

  before(async () => {
    api = await startWebhooks({ args: ["--send-timeout", "1s", "--audit-topic", ""] });
  });
  after(async () => {
    for (const s of servers) {
      (s as Server).closeAllConnections?.();
      s.close();
    }
    await api?.stop();
  });

  const testDelivery = async (endpoint: string) => {
    const config = await api.call("POST", "/configs", { endpoint, eventTypes: ["hostile.test"] });
    const started = Date.now();
    const r = await api.call("POST", `/configs/${config.body.data.id}/test`);
    expect(r.status, r.text).to.equal(200);
    return { attempt: r.body.data, ms: Date.now() - started };
  };

  it("gives up on a receiver that never answers after the send timeout (status 0)", async () => {
    const { server, url } = await listen(createHttpServer(() => {}));
    servers.push(server);
    const { attempt, ms } = await testDelivery(url);
    expect(attempt).to.include({ statusCode: 0, status: "failed" });
    expect(attempt.error).to.match(/timeout/);
    expect(ms).to.be.within(900, 5000);
  });

  it("classifies a reset connection as status 0", async () => {
    const { server, url } = await listen(
      createTcpServer((socket) => socket.once("data", () => socket.resetAndDestroy())),
    );
    servers.push(server);
    const { attempt } = await testDelivery(url);
    expect(attempt).to.include({ statusCode: 0, status: "failed" });
    expect(attempt.error).to.match(/ECONNRESET|socket|closed/i);
  });

  it("bounds a body that trickles forever by the send timeout, keeping the status", async () => {
    const { server, url } = await listen(
      createHttpServer((_req, res) => {
        res.writeHead(200);
        const timer = setInterval(() => res.write("."), 100);
        res.on("close", () => clearInterval(timer));
      }),
    );
    servers.push(server);
    const { attempt, ms } = await testDelivery(url);
    expect(attempt).to.include({ statusCode: 200, status: "success" });
    expect(ms).to.be.below(5000);
  });

  it("reads only a bounded excerpt of a huge answer", async () => {
    const chunk = Buffer.alloc(1 << 20, 120);
    let written = 0;
    const { server, url } = await listen(
      createHttpServer((_req, res) => {
        res.writeHead(500);
        const pump = () => {
          while (written < 200 * chunk.length && res.write(chunk)) written += chunk.length;
          if (written >= 200 * chunk.length) res.end();
        };
        res.on("drain", pump);
        pump();
      }),
    );
    servers.push(server);
    const before = rssKb(api.process.child.pid!);
    const { attempt, ms } = await testDelivery(url);
    expect(attempt).to.include({ statusCode: 500, status: "failed" });
    expect(ms).to.be.below(5000);
    expect(written).to.be.below(100 * chunk.length);
    expect(rssKb(api.process.child.pid!) - before).to.be.below(64 * 1024);
  });

  it("follows a redirect to the final answer", async () => {
    const { server, url } = await listen(
      createHttpServer((req, res) => {
        if (req.url === "/hook") res.writeHead(307, { location: "/moved" }).end();
        else res.writeHead(204).end();
      }),
    );
    servers.push(server);
    const { attempt } = await testDelivery(url);
    expect(attempt).to.include({ statusCode: 204, status: "success" });
  });
});
