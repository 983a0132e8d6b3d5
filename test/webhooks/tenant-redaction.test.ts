import { expect } from "chai";
import { TestJwks } from "../support/jwks.js";
import { freePort } from "../support/ports.js";
import { Receiver } from "../support/receiver.js";
import { startWebhooks, type WebhooksUnderTest } from "../support/webhooks-server.js";

/**
 * The errors of a tenant's sends, as its own token and its portal session read them, name
 * no address of the deployment's network; the operator reads them whole (real API,
 * PostgreSQL, JWKS; a send to a closed loopback port).
 */
/** Every error text of an answer (the fields that carry one). */
function errorsOf(value: unknown): string[] {
  if (Array.isArray(value)) return value.flatMap(errorsOf);
  if (value === null || typeof value !== "object") return [];
  return Object.entries(value).flatMap(([k, v]) =>
    ["error", "reason", "lastError"].includes(k) && typeof v === "string" ? [v] : errorsOf(v),
  );
}

describe("send errors shown to tenants withhold addresses", function () {
  this.timeout(120_000);
  let jwks: TestJwks;
  let api: WebhooksUnderTest;

  before(async () => {
    jwks = await TestJwks.start();
    api = await startWebhooks({ args: [...jwks.args, "--audit-topic", ""] });
  });
  after(async () => {
    await api?.stop();
    jwks?.close();
  });

  it("answers a tenant token and a portal session without the address a send failed on, the operator with it", async () => {
    const admin = await jwks.sign({ sub: "admin" });
    const as = (bearer: string) => ({ authorization: `Bearer ${bearer}` });
    const tenant = (await api.call("POST", "/tenants", { uid: "redact-co" }, as(admin))).body.data;
    const closed = await freePort();
    const config = await api.call(
      "POST",
      "/configs",
      { endpoint: `http://127.0.0.1:${closed}/hook`, eventTypes: ["r.*"], tenantId: tenant.id },
      as(admin),
    );
    expect(config.status, config.text).to.equal(200);
    const scoped = await jwks.sign({ sub: "redact-app", tenant: tenant.id });
    const tested = await api.call("POST", `/configs/${config.body.data.id}/test`, undefined, as(scoped));
    expect(tested.status, tested.text).to.equal(200);
    expect(tested.body.data.error).to.include("[address withheld]");
    expect(errorsOf(tested.body).join(" ")).to.not.include("127.0.0.1");

    const webhook = tested.body.data.webhookID;
    const session = (
      await api.call("POST", `/tenants/${tenant.id}/portal-sessions`, { features: ["deliveries"] }, as(admin))
    ).body.token;
    for (const bearer of [scoped, session]) {
      for (const p of [
        `/webhooks/${webhook}`,
        `/webhooks/${webhook}/attempts`,
        `/configs/${config.body.data.id}/deliveries`,
      ]) {
        const r = await api.call("GET", p, undefined, as(bearer));
        expect(r.status, `${p}: ${r.text}`).to.equal(200);
        // The config's own endpoint is the tenant's to see; the errors name no address.
        const errors = errorsOf(r.body).join(" ");
        expect(errors, p).to.not.include("127.0.0.1");
        expect(errors, p).to.include("[address withheld]");
      }
    }
    const whole = await api.call("GET", `/webhooks/${webhook}`, undefined, as(admin));
    expect(whole.body.data.reason).to.include(`127.0.0.1:${closed}`);
  });

  it("withholds the addresses in an attempt's excerpt of the endpoint's answer from a tenant, not from the operator", async () => {
    const admin = await jwks.sign({ sub: "admin" });
    const as = (bearer: string) => ({ authorization: `Bearer ${bearer}` });
    const tenant = (await api.call("POST", "/tenants", { uid: "redact-answer" }, as(admin))).body.data;
    const receiver = await new Receiver().start();
    receiver.respond = (_req, res) =>
      res
        .writeHead(502, { location: "http://10.0.0.7/x" })
        .end("upstream 10.0.0.7:8080 and [fd00::7]:80 down");
    try {
      const config = await api.call(
        "POST",
        "/configs",
        { endpoint: receiver.url, eventTypes: ["r.*"], tenantId: tenant.id },
        as(admin),
      );
      const scoped = await jwks.sign({ sub: "redact-app", tenant: tenant.id });
      const tested = await api.call("POST", `/configs/${config.body.data.id}/test`, undefined, as(scoped));
      expect(tested.body.data.response.body).to.equal(
        "upstream [address withheld] and [address withheld] down",
      );
      expect(tested.body.data.response.headers.location).to.equal("http://[address withheld]/x");
      const whole = await api.call(
        "GET",
        `/webhooks/${tested.body.data.webhookID}/attempts`,
        undefined,
        as(admin),
      );
      expect(whole.body.cursor.data[0].response.body).to.equal(
        "upstream 10.0.0.7:8080 and [fd00::7]:80 down",
      );
    } finally {
      await receiver.stop();
    }
  });
});
