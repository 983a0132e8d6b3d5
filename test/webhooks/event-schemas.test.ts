import { expect } from "chai";
import { DeliveryEnv } from "../support/delivery-env.js";
import { deadLetters, eventually, metric, sql } from "../support/poison.js";
import { Receiver } from "../support/receiver.js";
import { startWebhooks } from "../support/webhooks-server.js";

const SCHEMA = {
  type: "object",
  required: ["id", "amount"],
  properties: { id: { type: "string" }, amount: { type: "number" }, lines: { type: "array" } },
};

/**
 * Payloads checked against their type's schema in the event catalog, on the one start
 * path, against the real NATS, PostgreSQL and Temporal dev server: refused with
 * --enforce-event-schemas (400 at POST /events, a dead letter from the broker), counted
 * and delivered without it.
 */
describe("event schemas on the start path", function () {
  this.timeout(180_000);
  let receiver: Receiver;

  before(async () => {
    receiver = await new Receiver().start();
  });
  after(async () => {
    await receiver?.stop();
  });

  const received = (ik: string) =>
    receiver.requests.filter((r) => JSON.parse(r.body).idempotency_key === ik).length;

  describe("with --enforce-event-schemas", () => {
    const env = new DeliveryEnv();
    let configId: string;

    before(async () => {
      await env.start(["--enforce-event-schemas"]);
      const put = await env.api.call("PUT", "/event-types/shop.order_paid", { schema: SCHEMA });
      expect(put.status, put.text).to.equal(201);
      configId = (await env.createConfig({ endpoint: receiver.url, eventTypes: ["shop.*"] })).id;
    });
    after(async () => {
      await env.stop();
    });

    it("refuses a payload that fails the schema at POST /events, naming the path, and delivers one that passes", async () => {
      const bad = env.event({ app: "shop", type: "order_paid", payload: { id: "o1", amount: "12" } });
      const refused = await env.api.call("POST", "/events", bad);
      expect(refused.status, refused.text).to.equal(400);
      expect(refused.body).to.deep.equal({
        errorCode: "VALIDATION",
        errorMessage: `the payload does not match the schema of event type "shop.order_paid" (catalog version ${
          (await env.api.call("GET", "/event-types/shop.order_paid")).body.data.version
        }): payload.amount must be of type number`,
      });
      const missing = await env.api.call(
        "POST",
        "/events",
        env.event({ app: "shop", type: "order_paid", payload: { amount: 1 } }),
      );
      expect(missing.status, missing.text).to.equal(400);
      expect(missing.body.errorMessage).to.match(/missing required field "payload.id"$/);
      const nested = await env.api.call(
        "POST",
        "/events",
        env.event({ app: "shop", type: "order_paid", payload: { id: "o1", amount: 1, lines: {} } }),
      );
      expect(nested.body.errorMessage).to.match(/payload.lines must be of type array$/);

      const good = env.event({ app: "shop", type: "order_paid", payload: { id: "o1", amount: 12 } });
      const accepted = await env.api.call("POST", "/events", good);
      expect(accepted.status, accepted.text).to.equal(202);
      expect((await env.result(configId, good.idempotency_key)).status).to.equal("success");
      expect(received(good.idempotency_key)).to.equal(1);
      // Types outside the catalog are not checked.
      const other = env.event({ app: "shop", type: "order_shipped", payload: "anything" });
      expect((await env.api.call("POST", "/events", other)).status).to.equal(202);
      expect((await env.result(configId, other.idempotency_key)).status).to.equal("success");
      // Refused, so never started.
      expect(received(bad.idempotency_key)).to.equal(0);
      expect(
        await metric(env.api, "webhooks_event_schema_failures_total", { type: "shop.order_paid" }),
      ).to.equal(3);
    });

    it("dead-letters a failing event from NATS with the schema error; after the schema is fixed, its replay delivers it", async () => {
      const bad = env.event({ app: "shop", type: "order_paid", payload: { id: 7, amount: 1 } });
      const good = env.event({ app: "shop", type: "order_paid", payload: { id: "o2", amount: 1 } });
      await env.publish(bad);
      await env.publish(good);
      expect((await env.result(configId, good.idempotency_key)).status).to.equal("success");
      await eventually("the dead letter", async () => (await deadLetters(env.api)).length === 1, 30_000);
      const [letter] = await deadLetters(env.api);
      expect(letter).to.include({ kind: "permanent", config_id: null, event_type: "shop.order_paid" });
      expect(letter!.reason).to.match(
        /^the payload does not match the schema of event type "shop\.order_paid" \(catalog version \d+\): payload\.id must be of type string$/,
      );
      const early = await env.api.call("POST", `/dead-letters/${letter!.id}/replay`);
      expect(early.status, early.text).to.equal(409);
      expect(early.body.errorMessage).to.match(/payload\.id must be of type string/);

      // A new version of the schema takes effect on the next event, without a restart.
      const relaxed = {
        ...SCHEMA,
        properties: { ...SCHEMA.properties, id: { type: ["string", "integer"] } },
      };
      expect(
        (await env.api.call("PUT", "/event-types/shop.order_paid", { schema: relaxed })).status,
      ).to.equal(200);
      const replay = await env.api.call("POST", `/dead-letters/${letter!.id}/replay`);
      expect(replay.status, replay.text).to.equal(200);
      expect((await env.result(configId, bad.idempotency_key)).status).to.equal("success");
      expect(received(bad.idempotency_key)).to.equal(1);
      expect(received(good.idempotency_key)).to.equal(1);
    });
    it("keeps the tenant an event named (by uid) on the dead letter of a schema failure, so the tenant sees it", async () => {
      const acme = await env.api.call("POST", "/tenants", { uid: "acme-schemas" });
      expect(acme.status, acme.text).to.equal(200);
      const bad = env.event({
        app: "shop",
        type: "order_paid",
        tenant: "acme-schemas",
        payload: { amount: 1 },
      });
      await env.publish(bad);
      let row: { id: string; tenant_id: string | null } | undefined;
      await eventually(
        "the tenant's dead letter",
        async () => {
          [row] = await sql<{ id: string; tenant_id: string | null }>(
            env.api,
            "SELECT id, tenant_id FROM dead_letters WHERE convert_from(message, 'UTF8') LIKE $1",
            [`%${bad.idempotency_key}%`],
          );
          return row !== undefined;
        },
        30_000,
      );
      expect(row!.tenant_id).to.equal(acme.body.data.id);
      const listed = await env.api.call("GET", `/dead-letters/${row!.id}`);
      expect(listed.body.data.tenantID, listed.text).to.equal(acme.body.data.id);
    });

    it("leaves a payload too deep for any delivery to the event bounds, even under a recursive schema", async () => {
      const tree = {
        $defs: { node: { type: ["array", "integer"], items: { $ref: "#/$defs/node" } } },
        $ref: "#/$defs/node",
      };
      expect((await env.api.call("PUT", "/event-types/shop.tree", { schema: tree })).status).to.equal(201);
      // 10 000 levels, as text (JSON.stringify would overflow): the broker takes it (POST /events
      // bodies stop at 1 000); the recursive schema would walk it as deep.
      const payload = `${"[".repeat(10_000)}1${"]".repeat(10_000)}`;
      await env.publish(`{"idempotency_key":"deep-tree","app":"shop","type":"tree","payload":${payload}}`);
      const shallow = env.event({ app: "shop", type: "tree", payload: [[1], 2] });
      await env.publish(shallow);
      expect((await env.result(configId, shallow.idempotency_key)).status).to.equal("success");
      await eventually(
        "the dead letter",
        async () => (await deadLetters(env.api)).some((d) => d.event_type === "shop.tree"),
        30_000,
      );
      const letter = (await deadLetters(env.api)).find((d) => d.event_type === "shop.tree")!;
      expect(letter).to.include({ kind: "permanent", delivery_count: 1 });
      expect(letter.reason).to.match(/nests 10000 levels deep; deliveries take at most 128/);
    });

    it("reaches another process sharing the database without a restart", async () => {
      // A second API process on the same database: it reads the catalog, never written through it.
      const other = await startWebhooks({
        db: env.api.db,
        args: ["--enforce-event-schemas", "--audit-topic", ""],
      });
      try {
        // A type no config subscribes to: its events start nothing, they are only checked.
        const event = () => env.event({ app: "cross", type: "checked", payload: { amount: "1" } });
        expect((await other.call("POST", "/events", event())).status).to.equal(202);
        const put = await env.api.call("PUT", "/event-types/cross.checked", {
          schema: { type: "object", properties: { amount: { type: "number" } } },
        });
        expect(put.status, put.text).to.equal(201);
        await eventually(
          "the other process refusing the event",
          async () => (await other.call("POST", "/events", event())).status === 400,
          30_000,
        );
        const refused = await other.call("POST", "/events", event());
        expect(refused.body.errorMessage).to.match(/payload\.amount must be of type number$/);
        expect((await env.api.call("DELETE", "/event-types/cross.checked")).status).to.equal(200);
        await eventually(
          "the other process accepting it again",
          async () => (await other.call("POST", "/events", event())).status === 202,
          30_000,
        );
      } finally {
        await other.stop();
      }
    });
  });

  describe("without --enforce-event-schemas", () => {
    const env = new DeliveryEnv();
    let configId: string;

    before(async () => {
      await env.start();
      expect((await env.api.call("PUT", "/event-types/shop.order_paid", { schema: SCHEMA })).status).to.equal(
        201,
      );
      expect(
        (await env.api.call("PUT", "/event-types/shop.order_legacy", { deprecated: true })).status,
      ).to.equal(201);
      configId = (await env.createConfig({ endpoint: receiver.url, eventTypes: ["shop.*"] })).id;
    });
    after(async () => {
      await env.stop();
    });

    it("delivers failing payloads from POST /events and NATS, counting them; counts deprecated types' events", async () => {
      const overHttp = env.event({ app: "shop", type: "order_paid", payload: { amount: "12" } });
      const r = await env.api.call("POST", "/events", overHttp);
      expect(r.status, r.text).to.equal(202);
      const overNats = env.event({ app: "shop", type: "order_paid", payload: { id: 1 } });
      await env.publish(overNats);
      const passing = env.event({ app: "shop", type: "order_paid", payload: { id: "o3", amount: 3 } });
      await env.publish(passing);
      const legacy = env.event({ app: "shop", type: "order_legacy", payload: {} });
      await env.publish(legacy);
      for (const e of [overHttp, overNats, passing, legacy]) {
        expect((await env.result(configId, e.idempotency_key)).status).to.equal("success");
        expect(received(e.idempotency_key)).to.equal(1);
      }
      expect(
        await metric(env.api, "webhooks_event_schema_failures_total", { type: "shop.order_paid" }),
      ).to.equal(2);
      expect(
        await metric(env.api, "webhooks_deprecated_events_total", { type: "shop.order_legacy" }),
      ).to.equal(1);
      expect(await deadLetters(env.api)).to.deep.equal([]);
    });
  });
});
