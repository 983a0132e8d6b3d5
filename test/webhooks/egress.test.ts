import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { expect } from "chai";
import { EgressPolicy, parseCidr } from "../../core/egress-policy.js";
import { DeliveryEnv } from "../support/delivery-env.js";
import { runCommand } from "../support/process.js";
import { startWebhooks, type WebhooksUnderTest } from "../support/webhooks-server.js";

// No test here sends a packet off this machine: denied addresses outside the
// loopback range are only ever given to the decision function or refused at
// creation (literals), and every send goes to 127.0.0.0/8 names.

const policy = (over: Partial<ConstructorParameters<typeof EgressPolicy>[0]> = {}) =>
  new EgressPolicy({ denyPrivate: false, allow: [], deny: [], ...over });

async function listenOn(host: string, handler: Parameters<typeof createServer>[1]) {
  const server = createServer(handler);
  await new Promise<void>((resolve) => server.listen(0, host, resolve));
  return { server, port: (server.address() as AddressInfo).port };
}

/** A test send of a config whose endpoint names localhost, to a receiver there: its attempt, and what arrived. */
async function testSendToLocalhost(api: WebhooksUnderTest) {
  let received = 0;
  const { server, port } = await listenOn("127.0.0.1", (_req, res) => {
    received++;
    res.end();
  });
  try {
    const config = await api.call("POST", "/configs", {
      endpoint: `http://localhost:${port}/hook`,
      eventTypes: ["egress.test"],
    });
    expect(config.status, config.text).to.equal(200);
    const attempt = (await api.call("POST", `/configs/${config.body.data.id}/test`)).body.data;
    return { attempt, received };
  } finally {
    server.close();
  }
}

describe("egress policy", function () {
  this.timeout(120_000);

  describe("the decision on an address", () => {
    it("always denies link-local, metadata, unspecified and multicast addresses, in every spelling", () => {
      const p = policy({ allow: ["0.0.0.0/0", "::/0"] });
      for (const ip of [
        "169.254.169.254",
        "::ffff:169.254.169.254",
        "::ffff:a9fe:a9fe",
        "64:ff9b::a9fe:a9fe",
        "fe80::1",
        "0.0.0.0",
        "::",
        "100.100.100.200",
        "fd00:ec2::254",
        "224.0.0.1",
        "ff02::1",
      ]) {
        expect(p.reason(ip), ip).to.match(/always denied/);
      }
    });

    it("denies private ranges unless --egress-allow-private", () => {
      for (const ip of [
        "127.0.0.1",
        "10.1.2.3",
        "172.16.0.1",
        "192.168.1.1",
        "::1",
        "fd12::1",
        "100.64.0.1",
      ]) {
        expect(policy().reason(ip), ip).to.equal(undefined);
        expect(policy({ denyPrivate: true }).reason(ip), ip).to.match(
          /private ranges are denied unless --egress-allow-private/,
        );
      }
      expect(policy({ denyPrivate: true }).reason("93.184.215.14")).to.equal(undefined);
    });

    it("applies deny lists, then allow lists (which admit listed private ranges)", () => {
      const p = policy({ denyPrivate: true, allow: ["10.1.0.0/16", "2001:db8::/32"], deny: ["10.1.9.0/24"] });
      expect(p.reason("10.1.2.3")).to.equal(undefined);
      expect(p.reason("2001:db8::5")).to.equal(undefined);
      expect(p.reason("10.1.9.9")).to.equal("10.1.9.9 is in --egress-deny 10.1.9.0/24");
      expect(p.reason("10.2.0.1")).to.equal("10.2.0.1 is not in --egress-allow");
      expect(p.reason("93.184.215.14")).to.equal("93.184.215.14 is not in --egress-allow");
      expect(policy({ deny: ["127.0.0.2"] }).reason("127.0.0.2")).to.match(/--egress-deny 127.0.0.2$/);
    });

    it("names what is wrong with a bad range, also as a flag", async () => {
      expect(() => parseCidr("10.0.0.0/33")).to.throw(/prefix length must be 0-32/);
      expect(() => parseCidr("example.com/8")).to.throw(/not an address range/);
      const r = await runCommand("webhooks", ["serve", "--egress-deny", "10.0.0.0/8,nope"]);
      expect(r.code).to.equal(1);
      expect(r.stderr).to.match(/--egress-deny <cidrs>.*"nope" is not an address range/s);
    });
  });

  describe("the default of serve: private and loopback destinations denied", () => {
    let api: WebhooksUnderTest;
    before(async () => {
      // Without the opt-in every other test's process gets (test/support/process.ts).
      api = await startWebhooks({ args: ["--audit-topic", ""], env: { EGRESS_ALLOW_PRIVATE: "false" } });
    });
    after(() => api?.stop());

    it("refuses a loopback or private literal at creation and a loopback name at send, and says nothing about allowing them", async () => {
      for (const endpoint of ["http://127.0.0.1:9/hook", "http://[::1]:9/hook", "http://10.1.2.3/hook"]) {
        const r = await api.call("POST", "/configs", { endpoint, eventTypes: ["egress.test"] });
        expect(r.status, endpoint).to.equal(400);
        expect(r.body.errorMessage, endpoint).to.match(
          /private ranges are denied unless --egress-allow-private/,
        );
      }
      const { attempt, received } = await testSendToLocalhost(api);
      expect(attempt).to.include({ statusCode: 0, status: "failed" });
      expect(received).to.equal(0);
      expect(api.process.output).not.to.include("--egress-allow-private is on");
    });

    it("keeps denying with the deprecated --egress-deny-private, which wins over the opt-in", async () => {
      const both = await startWebhooks({
        args: ["--audit-topic", "", "--egress-deny-private"],
        env: { EGRESS_ALLOW_PRIVATE: "true" },
      });
      try {
        const r = await both.call("POST", "/configs", { endpoint: "http://127.0.0.1:9/", eventTypes: ["x"] });
        expect(r.status, r.text).to.equal(400);
      } finally {
        await both.stop();
      }
    });
  });

  describe("loopback denied by flag (--egress-deny 127.0.0.0/8,::1/128)", () => {
    let api: WebhooksUnderTest;
    before(async () => {
      api = await startWebhooks({ args: ["--audit-topic", "", "--egress-deny", "127.0.0.0/8,::1/128"] });
    });
    after(() => api?.stop());

    it("refuses configs whose endpoint is a denied address literal, storing nothing", async () => {
      const before = (await api.call("GET", "/configs")).body.cursor.data.length;
      for (const [endpoint, why] of [
        ["http://169.254.169.254/latest/meta-data", /169\.254\.169\.254 is link-local/],
        ["http://0xa9fea9fe/", /169\.254\.169\.254 is link-local/],
        ["http://[::ffff:169.254.169.254]/", /link-local/],
        ["http://[fe80::1]:8080/", /fe80::1 is link-local/],
        ["http://0.0.0.0:8080/", /0\.0\.0\.0 is unspecified/],
        ["http://127.0.0.1:9/hook", /127\.0\.0\.1 is in --egress-deny 127\.0\.0\.0\/8/],
      ] as const) {
        const r = await api.call("POST", "/configs", { endpoint, eventTypes: ["egress.test"] });
        expect(r.status, endpoint).to.equal(400);
        expect(r.body.errorMessage, endpoint)
          .to.match(/refused by the egress policy/)
          .and.match(why);
      }
      expect((await api.call("GET", "/configs")).body.cursor.data.length).to.equal(before);
    });

    it("denies a name that resolves only to denied addresses when it sends, as a failed attempt", async () => {
      const { attempt, received } = await testSendToLocalhost(api);
      expect(attempt).to.include({ statusCode: 0, status: "failed" });
      expect(attempt.error).to.match(
        /egress policy: localhost resolves only to denied addresses: 127\.0\.0\.1/,
      );
      expect(received).to.equal(0);
    });

    it("says loudly at startup that private addresses are allowed (the tests opt in)", () => {
      expect(api.process.output).to.include("--egress-allow-private is on");
    });
  });

  describe("redirects (--egress-deny 127.0.0.2/32)", () => {
    const env = new DeliveryEnv();
    let allowed: { server: Server; port: number };
    let denied: { server: Server; port: number };
    let deniedHits = 0;

    before(async () => {
      denied = await listenOn("127.0.0.2", (_req, res) => {
        deniedHits++;
        res.end();
      });
      allowed = await listenOn("127.0.0.1", (req, res) => {
        if (req.url === "/ok") return res.writeHead(204).end();
        res.writeHead(307, { location: `http://127.0.0.2:${denied.port}/hook` }).end();
      });
      await env.start(["--egress-deny", "127.0.0.2/32"]);
    });
    after(async () => {
      await env.stop();
      allowed?.server.close();
      denied?.server.close();
    });

    it("re-checks every hop: a redirect to a denied address fails the delivery at once, nothing reaches it", async () => {
      const config = await env.createConfig({
        endpoint: `http://127.0.0.1:${allowed.port}/moved`,
        eventTypes: ["ledger.redirected"],
      });
      const event = env.event({ type: "redirected" });
      await env.publish(event);
      const result = await env.result(config.id, event.idempotency_key);
      expect(result).to.include({ status: "failed", attempts: 1, lastStatusCode: 0 });
      expect(result.reason).to.match(/egress policy: 127\.0\.0\.2 is in --egress-deny 127\.0\.0\.2\/32/);
      const rows = await env.attempts(config.id);
      expect(rows.map((r) => [r.status, r.status_code])).to.deep.equal([["failed", 0]]);
      expect(deniedHits).to.equal(0);
      // The same endpoint's allowed path still works.
      const ok = await env.createConfig({
        endpoint: `http://127.0.0.1:${allowed.port}/ok`,
        eventTypes: ["ledger.fine"],
      });
      const fine = env.event({ type: "fine" });
      await env.publish(fine);
      expect((await env.result(ok.id, fine.idempotency_key)).status).to.equal("success");
    });
  });
});
