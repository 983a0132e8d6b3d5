import net from "node:net";
import { expect } from "chai";
import express from "express";
import { listen, type RunningServer } from "../../common/http-server.js";
import { createEntityRouter } from "../../entity/http/express-adapter.js";
import { entityFastPath } from "../../entity/http/fast-path.js";
import type { EntityServer } from "../../entity/server/server.js";
import { attemptData, closeHarness, type Harness, openHarness, testServer } from "./support.js";

/** Writes one request (asking for Connection: close) and returns every byte of the answer but the Date header. */
function exchange(port: number, request: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = net.connect(port, "127.0.0.1");
    const chunks: Buffer[] = [];
    socket.on("connect", () => socket.write(request));
    socket.on("data", (d: Buffer) => chunks.push(d));
    socket.on("end", () =>
      resolve(
        Buffer.concat(chunks)
          .toString("utf8")
          .replace(/\r\nDate: [^\r]*/, ""),
      ),
    );
    socket.on("error", reject);
  });
}

const request = (method: string, target: string, headers: Record<string, string> = {}, body = "") =>
  `${method} ${target} HTTP/1.1\r\nHost: test\r\n${Object.entries(headers)
    .map(([k, v]) => `${k}: ${v}\r\n`)
    .join("")}Connection: close\r\n\r\n${body}`;

describe("entity fast path (node:http without express for plain reads)", () => {
  let h: Harness;
  let server: EntityServer;
  let viaExpress: RunningServer;
  let viaFastPath: RunningServer;
  let configId: string;
  const reachedExpress: string[] = [];

  before(async () => {
    h = await openHarness();
    for (let n = 0; n < 3; n++) {
      const c = await h.prisma.config.create({
        data: {
          name: `c${n}`,
          endpoint: `http://a.test/${n}`,
          eventTypes: ["x.y", "a.*"],
          secret: "top-secret",
        },
      });
      configId = c.id;
      await h.prisma.attempt.create({ data: attemptData(c.id, n) });
    }
    server = testServer(h)
      .addEntityAction("config", "stats", () => 3)
      .setAuthenticator((r) => r.alias !== "attempt" || (r.username === "u" && r.password === "p"));
    const app = express();
    app.disable("x-powered-by");
    app.set("etag", false);
    app.get("/_own", (_req, res) => {
      res.json({ own: true });
    });
    // Has no effect on answers; shows which requests express handled.
    app.use((req, _res, next) => {
      reachedExpress.push(req.originalUrl);
      next();
    });
    app.use(createEntityRouter(server));
    viaExpress = await listen(app, { host: "127.0.0.1", port: 0 });
    viaFastPath = await listen(entityFastPath(server, app), { host: "127.0.0.1", port: 0 });
  });
  after(async () => {
    await viaExpress?.close();
    await viaFastPath?.close();
    await closeHarness(h);
  });

  const basic = (user: string, password: string) =>
    `Basic ${Buffer.from(`${user}:${password}`).toString("base64")}`;

  it("answers byte for byte as the express router, and takes only what needs nothing of express", async () => {
    const taken = () => [
      request("GET", "/config.json"),
      request("GET", "/config.json?_page=2&_max_per_page=1"),
      request("GET", "/config.xml?_first=1&_max=2"),
      request("GET", "/config?_format=XML"),
      request("GET", "/config"),
      request("GET", `/config/${configId}.json`),
      request("GET", `/config/${configId}.xml`),
      request("GET", `/config/${configId.toUpperCase()}`),
      request("GET", "/config/nope.json"),
      request("GET", `/config/${configId}/nope.xml`),
      request("GET", "/config/stats.xml"),
      request("GET", "/config.json?name=c1"),
      request("GET", "/config.json?active=maybe"),
      request("GET", "/config.json?secret=top-secret"),
      request("GET", "/config.json?_entity=attempt"),
      request("GET", "/config.json?_format=json&_format=xml"),
      request("GET", "/config.xml?_format=json"),
      request("GET", "/config?_format=yaml"),
      request("GET", "/config.json?name=%ZZ"),
      request("GET", "/config/%E0%A4%A.json"),
      request("GET", "/config.json?tags[]=a"),
      request("GET", "/nope.json"),
      request("GET", "/"),
      request("GET", "//config.json"),
      request("GET", "/a/b/c/d.xml"),
      request("GET", "/attempt.json"),
      request("GET", "/attempt.xml", { Authorization: basic("u", "p") }),
      request("GET", "/attempt.json", { Authorization: basic("u", "wrong") }),
      request("GET", "/attempt.json", { Authorization: "Bearer x" }),
      request("GET", "/config.json", { Accept: "application/xml" }),
      request("GET", "/config?_format=xml", { Accept: "application/json" }),
      request("GET", "/config.json", { "Content-Length": "0" }),
      request("HEAD", "/config.json"),
      request("HEAD", `/config/${configId}.xml`),
      request("HEAD", "/nope.xml"),
    ];
    const left = () => [
      request("GET", "/config", { Accept: "application/xml" }),
      request("GET", "/config", { Accept: "text/html" }),
      request("GET", "/config.json", { "Content-Type": "application/json", "Content-Length": "2" }, "{}"),
      request("GET", "/config.json", { "Content-Type": "text/plain", "Content-Length": "1" }, "x"),
      request("GET", "/_own"),
      request("GET", "/config.json#top"),
      request("POST", "/config.json", { "Content-Type": "application/json", "Content-Length": "2" }, "{}"),
      request("DELETE", "/config/00000000-0000-0000-0000-000000000000.json"),
      request("OPTIONS", "/config.json"),
    ];
    for (const [requests, viaFast] of [
      [taken(), true],
      [left(), false],
    ] as const) {
      for (const raw of requests) {
        const expected = await exchange(viaExpress.port, raw);
        reachedExpress.length = 0;
        const actual = await exchange(viaFastPath.port, raw);
        expect(actual, raw).to.equal(expected);
        expect(reachedExpress.length, raw).to.equal(viaFast || raw.includes("/_own") ? 0 : 1);
      }
    }
  });

  it("leaves everything to express when the app sends ETags", async () => {
    const app = express();
    app.use(createEntityRouter(server));
    const running = await listen(entityFastPath(server, app), { host: "127.0.0.1", port: 0 });
    try {
      const answer = await exchange(running.port, request("GET", `/config/${configId}.json`));
      expect(answer).to.match(/\r\nETag: W\/"/);
      expect(answer).to.match(/\r\nX-Powered-By: Express/);
    } finally {
      await running.close();
    }
  });
});
