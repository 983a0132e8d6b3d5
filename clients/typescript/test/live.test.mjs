// The installed package against the live API (WEBHOOKS_URL, with authentication on and a
// bearer token in WEBHOOKS_TOKEN), started with its worker and Temporal by
// test/clients/typescript-client.test.ts: a tenant, a config whose endpoint is this
// process, events, paging through the deliveries, a replay, the secret, and the verifier
// on the deliveries that really arrived.
import assert from "node:assert/strict";
import { randomBytes } from "node:crypto";
import { createServer } from "node:http";
import { after, before, test } from "node:test";
import {
  ApiError,
  createWebhooksClient,
  paginate,
  unwrap,
  verifyWebhook,
} from "@event-traffic/webhooks-client";

const { WEBHOOKS_URL: baseUrl, WEBHOOKS_TOKEN: token } = process.env;
if (!baseUrl || !token)
  throw new Error("set WEBHOOKS_URL and WEBHOOKS_TOKEN (a running API with authentication on)");
const api = createWebhooksClient({ baseUrl, token });
const run = randomBytes(4).toString("hex");

/** Deliveries this process received: headers and the exact body bytes. */
const received = [];
let receiver;
let endpoint;

before(async () => {
  receiver = createServer((req, res) => {
    const chunks = [];
    req.on("data", (c) => chunks.push(c));
    req.on("end", () => {
      received.push({ headers: req.headers, body: Buffer.concat(chunks) });
      res.writeHead(204).end();
    });
  });
  await new Promise((resolve) => receiver.listen(0, "127.0.0.1", resolve));
  endpoint = `http://127.0.0.1:${receiver.address().port}/hook`;
});
after(() => receiver.close());

async function until(what, check, timeoutMs = 60_000) {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await check();
    if (value) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
}

test("tenant, config, events, paged deliveries, replay, secret and verified deliveries", async () => {
  const tenant = unwrap(
    await api.POST("/tenants", { body: { uid: `ts-${run}`, name: "TypeScript client" } }),
  ).data;
  const created = unwrap(
    await api.POST("/configs", {
      body: { endpoint, eventTypes: ["clients.order_paid"], tenantId: tenant.id },
    }),
  ).data;
  assert.equal(created.tenantId, tenant.id);

  for (let i = 0; i < 3; i++) {
    const event = {
      tenant: tenant.uid,
      app: "clients",
      type: "order_paid",
      idempotency_key: `ts-${run}-${i}`,
      payload: { i },
    };
    const ingested = await api.POST("/events", { body: event });
    assert.equal(ingested.response.status, 202);
    assert.equal(unwrap(ingested).data.configs, 1);
  }
  await until("3 deliveries", () => received.length >= 3);

  // Two items a page: the three deliveries come over two pages.
  let pages = 0;
  const listed = await until("3 delivered deliveries", async () => {
    pages = 0;
    const all = [];
    for await (const d of paginate((cursor) => {
      pages++;
      return api.GET("/configs/{id}/deliveries", {
        params: { path: { id: created.id }, query: { pageSize: "2", cursor } },
      });
    }))
      all.push(d);
    return all.length === 3 && all.every((d) => d.status === "success") && all;
  });
  assert.equal(pages, 2);
  assert.deepEqual(
    listed.map((d) => d.webhookID).sort(),
    received.map((r) => r.headers["svc-webhook-id"]).sort(),
  );

  const original = listed[0].webhookID;
  const replay = await api.POST("/webhooks/{webhookId}/replay", {
    params: { path: { webhookId: original }, header: { "Idempotency-Key": `replay-${run}` } },
  });
  assert.equal(replay.response.status, 202);
  assert.equal(unwrap(replay).data.replayOf, original);
  await until("the replay's delivery", () =>
    received.find((r) => r.headers["svc-webhook-id"] === replay.data.data.webhookID),
  );

  const { secret } = unwrap(
    await api.GET("/configs/{id}/secret", { params: { path: { id: created.id } } }),
  ).data;
  assert.equal(secret, created.secret);
  for (const r of received) {
    assert.equal(verifyWebhook(secret, r.headers, r.body).id, r.headers["svc-webhook-id"]);
    assert.throws(() => verifyWebhook(secret, r.headers, Buffer.concat([r.body, Buffer.from(" ")])), {
      code: "no-matching-signature",
    });
  }
});

test("failures throw ApiError with the API's code", async () => {
  const missing = await api.GET("/configs/{id}", {
    params: { path: { id: "00000000-0000-4000-8000-000000000000" } },
  });
  assert.throws(
    () => unwrap(missing),
    (err) => err instanceof ApiError && err.status === 404 && err.code === "NOT_FOUND",
  );
  const anonymous = createWebhooksClient({ baseUrl });
  const refused = await anonymous.GET("/configs");
  assert.throws(() => unwrap(refused), { code: "UNAUTHORIZED", status: 401 });
});

test("a real 429 whose Retry-After is longer than maxDelayMs comes back at once", async () => {
  // The API runs with --config-max-test-sends 1: the second test send of a minute is refused.
  const config = unwrap(
    await api.POST("/configs", { body: { endpoint, eventTypes: ["clients.pinged"] } }),
  ).data;
  const impatient = createWebhooksClient({ baseUrl, token, retry: { maxDelayMs: 100 } });
  const path = { params: { path: { id: config.id } } };
  unwrap(await impatient.POST("/configs/{id}/test", path));
  const started = Date.now();
  const refused = await impatient.POST("/configs/{id}/test", path);
  assert.equal(refused.response.status, 429);
  assert.ok(Number(refused.response.headers.get("retry-after")) > 0);
  assert.ok(Date.now() - started < 5_000);
  assert.throws(() => unwrap(refused), { code: "RATE_LIMITED" });
});
