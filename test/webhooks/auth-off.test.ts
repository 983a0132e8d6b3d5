import { expect } from "chai";
import { freePort } from "../support/ports.js";
import { runCommand } from "../support/process.js";
import { httpRequest, rawRequest } from "../support/raw-http.js";
import { startWebhooks, type WebhooksUnderTest } from "../support/webhooks-server.js";

/**
 * Authentication off (no --auth-jwks-url), as a local stack runs: the API answers only
 * this machine unless the operator says otherwise, mints no portal session when it is open
 * to the network, and answers no Host name a web page could rebind to 127.0.0.1.
 */
describe("API with authentication off: loopback only, no rebinding, portal sessions", function () {
  this.timeout(120_000);

  it("refuses to serve beyond loopback without --insecure-no-auth, naming the ways out", async () => {
    const port = await freePort();
    for (const listen of [`0.0.0.0:${port}`, `:${port}`]) {
      const r = await runCommand("webhooks", ["serve", "--listen", listen]);
      expect(r.code, r.stderr).to.equal(1);
      expect(r.stderr).to.match(/reaches beyond this machine without authentication/);
      expect(r.stderr).to.include("--auth-jwks-url").and.include("--insecure-no-auth");
    }
  });

  describe("--insecure-no-auth on 0.0.0.0", () => {
    let api: WebhooksUnderTest;
    before(async () => {
      api = await startWebhooks({ args: ["--audit-topic", "", "--insecure-no-auth"], listenHost: "0.0.0.0" });
    });
    after(() => api?.stop());

    it("starts, says loudly that anyone may call it, and mints no portal session", async () => {
      expect(api.process.output).to.match(
        /"level":40.*authentication is OFF and the API listens beyond this machine/,
      );
      const tenant = await api.call("POST", "/tenants", { uid: "acme" });
      expect(tenant.status, tenant.text).to.equal(200);
      const session = await api.call("POST", "/tenants/uid:acme/portal-sessions", {});
      expect(session.status, session.text).to.equal(403);
      expect(session.body.errorMessage).to.match(/not created while authentication is off/);
      expect((await api.call("GET", "/tenants/uid:acme/portal-sessions")).body.cursor.data).to.deep.equal([]);
    });
  });

  describe("on loopback (the local stack's way)", () => {
    let api: WebhooksUnderTest;
    let port: number;
    before(async () => {
      api = await startWebhooks({
        args: ["--audit-topic", "", "--portal-base-url", "https://hooks.example.com/webhooks"],
      });
      port = Number(new URL(api.url).port);
    });
    after(() => api?.stop());

    const withHost = (host: string | undefined, path = "/configs") =>
      rawRequest(
        port,
        host === undefined ? `GET ${path} HTTP/1.0\r\n\r\n` : httpRequest("GET", path, { host }),
      );

    it("answers IP literals, localhost, the portal's host and no Host; refuses any other name with 421", async () => {
      for (const host of [
        `127.0.0.1:${port}`,
        `localhost:${port}`,
        "LOCALHOST",
        `[::1]:${port}`,
        "api.localhost",
        "hooks.example.com",
        undefined,
      ]) {
        const r = await withHost(host);
        expect(r.status, `${host}: ${r.body}`).to.equal(200);
      }
      for (const host of [
        `rebind.attacker.example:${port}`,
        "127.0.0.1.nip.io",
        "localhost.attacker.example",
      ]) {
        const r = await withHost(host);
        expect(r.status, `${host}: ${r.body}`).to.equal(421);
        expect(JSON.parse(r.body).errorMessage).to.match(/is not this API's.*DNS rebinding/);
        // Health and metrics too: nothing is answered to a rebound name.
        expect((await withHost(host, "/_healthcheck")).status).to.equal(421);
      }
    });

    it("mints portal sessions on loopback", async () => {
      await api.call("POST", "/tenants", { uid: "acme" });
      const session = await api.call("POST", "/tenants/uid:acme/portal-sessions", {});
      expect(session.status, session.text).to.equal(201);
    });
  });
});
