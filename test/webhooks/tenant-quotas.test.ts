import { expect } from "chai";
import { Receiver } from "../support/receiver.js";
import { startWebhooks, type WebhooksUnderTest } from "../support/webhooks-server.js";

/**
 * Per-tenant quotas on the real API and PostgreSQL (no worker: a recovery stays running):
 * configs, live portal sessions, running recoveries and test sends a minute, each a 429 with
 * Retry-After naming its flag; the default tenant (the operator's) has none but the
 * per-config test-send rate.
 */
describe("tenant quotas (429 with Retry-After)", function () {
  this.timeout(120_000);
  let api: WebhooksUnderTest;
  let receiver: Receiver;
  let tenant: string;

  before(async () => {
    receiver = await new Receiver().start();
    api = await startWebhooks({
      args: [
        "--audit-topic",
        "",
        "--tenant-max-configs",
        "2",
        "--tenant-max-portal-sessions",
        "1",
        "--tenant-max-recoveries",
        "1",
        "--tenant-max-test-sends",
        "3",
        "--config-max-test-sends",
        "2",
      ],
    });
    tenant = (await api.call("POST", "/tenants", { uid: "quota-co" })).body.data.id;
  });
  after(async () => {
    await api?.stop();
    await receiver?.stop();
  });

  const config = async (tenantId?: string) =>
    api.call("POST", "/configs", {
      endpoint: receiver.url,
      eventTypes: ["q.*"],
      ...(tenantId ? { tenantId } : {}),
    });
  const refused = (r: { status: number; text: string; body: { errorCode: string } }, flag: string) => {
    expect(r.status, r.text).to.equal(429);
    expect(r.body.errorCode).to.equal("RATE_LIMITED");
    expect(r.text).to.include(flag);
  };

  it("caps a tenant's configs, not the default tenant's", async () => {
    expect((await config(tenant)).status).to.equal(200);
    expect((await config(tenant)).status).to.equal(200);
    const third = await config(tenant);
    refused(third, "--tenant-max-configs 2");
    expect(
      Number(
        (
          await fetch(`${api.url}/configs`, {
            method: "POST",
            headers: { "content-type": "application/json" },
            body: JSON.stringify({ endpoint: receiver.url, eventTypes: ["q.*"], tenantId: tenant }),
          })
        ).headers.get("retry-after"),
      ),
    ).to.be.greaterThan(0);
    expect((await api.call("GET", `/tenants/${tenant}/configs`)).body.cursor.data).to.have.length(2);
    for (let i = 0; i < 3; i++) expect((await config()).status).to.equal(200);
  });

  it("caps live portal sessions; a revoked one frees its place", async () => {
    const first = await api.call("POST", `/tenants/${tenant}/portal-sessions`, {});
    expect(first.status, first.text).to.equal(201);
    refused(
      await api.call("POST", `/tenants/${tenant}/portal-sessions`, {}),
      "--tenant-max-portal-sessions 1",
    );
    expect((await api.call("DELETE", `/tenants/${tenant}/portal-sessions/${first.body.id}`)).status).to.equal(
      204,
    );
    expect((await api.call("POST", `/tenants/${tenant}/portal-sessions`, {})).status).to.equal(201);
  });

  it("caps running recoveries, never the repeat of one already made", async () => {
    const id = (await api.call("GET", `/tenants/${tenant}/configs`)).body.cursor.data[0].id;
    const recover = (key: string) =>
      api.call(
        "POST",
        `/configs/${id}/recover`,
        { since: "2020-01-01T00:00:00Z" },
        { "idempotency-key": key },
      );
    expect((await recover("r-1")).status).to.equal(202);
    refused(await recover("r-2"), "--tenant-max-recoveries 1");
    expect((await recover("r-1")).status).to.equal(200);
  });

  it("caps test sends a minute per config and per tenant, with the seconds until one frees", async () => {
    const [c1, c2] = (await api.call("GET", `/tenants/${tenant}/configs`)).body.cursor.data.map(
      (c: { id: string }) => c.id,
    );
    const test = (id: string) => fetch(`${api.url}/configs/${id}/test`, { method: "POST" });
    for (let i = 0; i < 2; i++) expect((await test(c1)).status).to.equal(200);
    const perConfig = await test(c1);
    expect(perConfig.status).to.equal(429);
    expect(await perConfig.text()).to.include("--config-max-test-sends 2");
    expect(Number(perConfig.headers.get("retry-after"))).to.be.within(1, 60);
    expect((await test(c2)).status).to.equal(200);
    const perTenant = await test(c2);
    expect(perTenant.status).to.equal(429);
    expect(await perTenant.text()).to.include("--tenant-max-test-sends 3");
    expect(receiver.requests.length).to.equal(3);
    // The default tenant: the per-config rate only.
    const own = (await config()).body.data.id;
    for (let i = 0; i < 2; i++) expect((await test(own)).status).to.equal(200);
    expect((await test(own)).status).to.equal(429);
  });
});
