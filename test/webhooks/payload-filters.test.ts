import { WorkflowNotFoundError } from "@temporalio/client";
import { expect } from "chai";
import { DeliveryEnv } from "../support/delivery-env.js";
import { deadLetters, eventually, metric, sql } from "../support/poison.js";
import { Receiver } from "../support/receiver.js";

const FILTERED = "webhooks_events_filtered_total";

/** Payload filters on the real stack: the configs API, then events over NATS and POST /events. */
describe("payload filters (configs API, consumer and POST /events)", function () {
  this.timeout(120_000);
  const env = new DeliveryEnv();
  let big: Receiver;
  let usd: Receiver;

  before(async () => {
    await env.start();
    big = await new Receiver().start();
    usd = await new Receiver().start();
  });
  after(async () => {
    await big?.stop();
    await usd?.stop();
    await env.stop();
  });

  const keysOf = (r: Receiver, type: string) =>
    r.requests
      .map((q) => JSON.parse(q.body))
      .filter((m) => m.type === type)
      .map((m) => m.idempotency_key as string)
      .sort();
  const get = async (id: string) => (await env.api.call("GET", `/configs/${id}`)).body.data;

  it("stores a filter on create, returns it, keeps it when a replace omits it and removes it with null", async () => {
    const filter = { "payload.amount": { $gte: 100 }, $or: [{ "payload.coupon": null }, { app: "shop" }] };
    const created = await env.createConfig({ endpoint: big.url, eventTypes: ["api.kept"], filter });
    expect(created).to.deep.include({ filter });
    expect(await get(created.id)).to.deep.include({ filter });
    const list = await env.api.call("GET", "/configs");
    expect(list.body.cursor.data.find((c: { id: string }) => c.id === created.id)).to.deep.include({
      filter,
    });

    const kept = await env.api.call("PUT", `/configs/${created.id}`, {
      endpoint: big.url,
      eventTypes: ["api.kept"],
    });
    expect(kept.status, kept.text).to.equal(200);
    expect(kept.body.data).to.deep.include({ filter });

    const other = { "payload.tags": { $in: ["vip"] } };
    const replaced = await env.api.call("PUT", `/configs/${created.id}`, {
      endpoint: big.url,
      eventTypes: ["api.kept"],
      filter: other,
    });
    expect(replaced.body.data.filter).to.deep.equal(other);

    const removed = await env.api.call("PUT", `/configs/${created.id}`, {
      endpoint: big.url,
      eventTypes: ["api.kept"],
      filter: null,
    });
    expect(removed.status, removed.text).to.equal(200);
    expect(removed.body.data).not.to.have.property("filter");
    expect(await get(created.id)).not.to.have.property("filter");

    const plain = await env.createConfig({ endpoint: big.url, eventTypes: ["api.kept"] });
    expect(plain).not.to.have.property("filter");
  });

  it("refuses a bad filter with 400 naming its path, and leaves the stored config as it was", async () => {
    const filter = { "payload.amount": { $gte: 100 } };
    const config = await env.createConfig({ endpoint: big.url, eventTypes: ["api.refused"], filter });
    const before = await get(config.id);
    const endpoint = `${usd.url}?refused`;
    const cases: [unknown, string][] = [
      [
        { $or: [{ type: "x.y" }, { "payload.amount": { $gt: true } }] },
        'filter.$or[1]["payload.amount"].$gt must be a number or a string, got true',
      ],
      [{ "payload.amount": { $foo: 3 } }, 'filter["payload.amount"].$foo is not a supported operator'],
      [{ $where: "this.amount > 3" }, "filter.$where is not a supported operator"],
      [
        { "payload.email": { $regex: "(?=x)" } },
        'filter["payload.email"].$regex is not an RE2 regular expression',
      ],
      [{ "payload.a": { $in: "vip" } }, 'filter["payload.a"].$in must be an array of values, got "vip"'],
      [["payload.amount"], "filter must be a JSON object or null"],
      ["payload.amount > 3", "filter must be a JSON object or null"],
    ];
    for (const [bad, message] of cases) {
      for (const [method, path] of [
        ["PUT", `/configs/${config.id}`],
        ["POST", "/configs"],
      ] as const) {
        const r = await env.api.call(method, path, { endpoint, eventTypes: ["api.refused"], filter: bad });
        expect(r.status, `${method} ${JSON.stringify(bad)}: ${r.text}`).to.equal(400);
        expect(r.body.errorCode).to.equal("VALIDATION");
        expect(r.body.errorMessage).to.contain(message);
      }
    }
    expect(await get(config.id)).to.deep.equal(before);
    const stored = await sql<{ n: number }>(
      env.api,
      "SELECT count(*)::int AS n FROM configs WHERE endpoint = $1",
      [endpoint],
    );
    expect(stored[0]!.n).to.equal(0);
  });

  it("delivers an event over NATS and POST /events only to the configs whose filter it passes, counting the others", async () => {
    const type = "shop.order_paid";
    const bigOrders = await env.createConfig({
      endpoint: big.url,
      eventTypes: [type],
      filter: { "payload.amount": { $gte: 100 } },
    });
    const usdOrders = await env.createConfig({
      endpoint: usd.url,
      eventTypes: ["shop.*"],
      filter: { "payload.currency": { $in: ["USD"] } },
    });
    const before = await metric(env.api, FILTERED);
    // amount/currency: big only, usd only, both, neither.
    const orders = [
      [150, "EUR"],
      [50, "USD"],
      [200, "USD"],
      [10, "EUR"],
    ] as const;
    const event = (channel: string, i: number) =>
      env.event({
        app: "shop",
        type: "ORDER_PAID",
        idempotency_key: `${channel}-${i}`,
        payload: { amount: orders[i]![0], currency: orders[i]![1] },
      });

    const answers = [];
    for (let i = 0; i < orders.length; i++) {
      await env.publish(event("nats", i));
      const r = await env.api.call("POST", "/events", event("http", i));
      expect(r.status, r.text).to.equal(202);
      answers.push(r.body.data);
    }
    const configsOf = (a: { deliveries: { configID: string }[] }) =>
      a.deliveries.map((d) => d.configID).sort();
    expect(answers.map((a) => [a.configs, a.filtered ?? 0])).to.deep.equal([
      [1, 1],
      [1, 1],
      [2, 0],
      [0, 2],
    ]);
    expect(configsOf(answers[0])).to.deep.equal([bigOrders.id]);
    expect(configsOf(answers[1])).to.deep.equal([usdOrders.id]);
    expect(configsOf(answers[2])).to.deep.equal([bigOrders.id, usdOrders.id].sort());
    expect(answers[3]).to.deep.equal({ type, configs: 0, filtered: 2, deliveries: [] });

    const delivered: [string, number][] = [
      [bigOrders.id, 0],
      [bigOrders.id, 2],
      [usdOrders.id, 1],
      [usdOrders.id, 2],
    ];
    for (const channel of ["nats", "http"]) {
      for (const [configId, i] of delivered) {
        expect((await env.result(configId, `${channel}-${i}`)).status).to.equal("success");
      }
    }
    // Every NATS event has been consumed once the counter holds all eight filtered (config, event) pairs.
    await eventually(
      "filtered events counted",
      async () => (await metric(env.api, FILTERED)) - before >= 8,
      30_000,
    );
    expect((await metric(env.api, FILTERED)) - before).to.equal(8);
    expect(keysOf(big, type)).to.deep.equal(["http-0", "http-2", "nats-0", "nats-2"]);
    expect(keysOf(usd, type)).to.deep.equal(["http-1", "http-2", "nats-1", "nats-2"]);
    for (const channel of ["nats", "http"]) {
      for (const [configId, i] of [
        [bigOrders.id, 1],
        [bigOrders.id, 3],
        [usdOrders.id, 0],
        [usdOrders.id, 3],
      ] as const) {
        const handle = env.temporal.workflow.getHandle(env.workflowId(configId, `${channel}-${i}`));
        let missing: unknown;
        await handle.describe().catch((err) => {
          missing = err;
        });
        expect(missing, `${configId} ${channel}-${i}`).to.be.instanceOf(WorkflowNotFoundError);
      }
    }
    const rows = await sql<{ n: number }>(
      env.api,
      "SELECT count(*)::int AS n FROM attempts WHERE config_id = ANY($1::uuid[])",
      [[bigOrders.id, usdOrders.id]],
    );
    expect(rows[0]!.n).to.equal(8);
  });

  it("applies a replaced filter to the next event", async () => {
    const type = "refunds.order_refunded";
    const config = await env.createConfig({
      endpoint: big.url,
      eventTypes: [type],
      filter: { "payload.amount": { $gte: 100 } },
    });
    const refund = (key: string) =>
      env.event({ app: "refunds", type: "ORDER_REFUNDED", idempotency_key: key, payload: { amount: 20 } });
    const held = await env.api.call("POST", "/events", refund("refund-1"));
    expect(held.body.data).to.deep.include({ configs: 0, filtered: 1 });
    const put = await env.api.call("PUT", `/configs/${config.id}`, {
      endpoint: big.url,
      eventTypes: [type],
      filter: { "payload.amount": { $lt: 100 } },
    });
    expect(put.status, put.text).to.equal(200);
    const passed = await env.api.call("POST", "/events", refund("refund-2"));
    expect(passed.body.data).to.deep.include({ configs: 1 });
    expect((await env.result(config.id, "refund-2")).status).to.equal("success");
    expect(keysOf(big, type)).to.deep.equal(["refund-2"]);
  });

  it("keeps delivering an event to its other configs when a stored filter cannot run", async () => {
    const type = "shipping.order_shipped";
    const healthy = await env.createConfig({
      endpoint: usd.url,
      eventTypes: [type],
      filter: { "payload.amount": 1 },
    });
    const broken = await env.createConfig({ endpoint: big.url, eventTypes: [type] });
    // Written around the API (an operator's SQL): nothing checked it.
    await sql(env.api, `UPDATE configs SET filter = '{"payload.amount": {"$where": "1"}}' WHERE id = $1`, [
      broken.id,
    ]);
    const shipped = (key: string) =>
      env.event({ app: "shipping", type: "ORDER_SHIPPED", idempotency_key: key, payload: { amount: 1 } });

    const r = await env.api.call("POST", "/events", shipped("ship-http"));
    expect(r.status, r.text).to.equal(409);
    expect(r.body.errorMessage).to.contain("1 of 2 deliveries started");
    expect(r.body.errorMessage).to.contain(
      `config ${broken.id}: config ${broken.id} cannot be used: its filter fails: filter["payload.amount"].$where is not a supported operator`,
    );
    expect((await env.result(healthy.id, "ship-http")).status).to.equal("success");

    await env.publish(shipped("ship-nats"));
    expect((await env.result(healthy.id, "ship-nats")).status).to.equal("success");
    await eventually(
      "the broken config's share dead-lettered",
      async () => (await deadLetters(env.api)).some((d) => d.config_id === broken.id),
      30_000,
    );
    const letter = (await deadLetters(env.api)).find((d) => d.config_id === broken.id)!;
    expect(letter.kind).to.equal("permanent");
    expect(letter.reason).to.contain("its filter fails");
    expect(keysOf(usd, type)).to.deep.equal(["ship-http", "ship-nats"]);
    expect(keysOf(big, type)).to.deep.equal([]);

    // Fixed through the API: a replay applies the filter the config has now.
    const fix = (filter: unknown) =>
      env.api.call("PUT", `/configs/${broken.id}`, { endpoint: big.url, eventTypes: [type], filter });
    expect((await fix({ "payload.amount": { $gt: 1 } })).status).to.equal(200);
    const held = await env.api.call("POST", `/dead-letters/${letter.id}/replay`);
    expect(held.status, held.text).to.equal(409);
    expect(held.body.errorMessage).to.equal(
      `the event does not pass the payload filter of the 1 active config(s) subscribed to ${type}`,
    );
    expect((await fix({ "payload.amount": { $lte: 1 } })).status).to.equal(200);
    const replayed = await env.api.call("POST", `/dead-letters/${letter.id}/replay`);
    expect(replayed.status, replayed.text).to.equal(200);
    expect(replayed.body.data.deliveries.map((d: { configID: string }) => d.configID)).to.deep.equal([
      broken.id,
    ]);
    expect((await env.result(broken.id, "ship-nats")).status).to.equal("success");
    expect(keysOf(big, type)).to.deep.equal(["ship-nats"]);
  });
});
