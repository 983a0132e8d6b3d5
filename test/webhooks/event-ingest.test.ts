// tags: @temporal-server (also run on the production Temporal server: npm run test:temporal-server)
import { expect } from "chai";
import { DeliveryEnv } from "../support/delivery-env.js";
import { Receiver, signedWith } from "../support/receiver.js";

const SECRET = Buffer.alloc(24, 7).toString("base64");

/** POST /events: the consumer's start path over HTTP, against the real stack. */
describe("HTTP ingest (POST /events)", function () {
  this.timeout(120_000);
  const env = new DeliveryEnv();
  let receiver: Receiver;

  before(async () => {
    await env.start();
    receiver = await new Receiver().start();
  });
  after(async () => {
    await receiver?.stop();
    await env.stop();
  });

  const post = (body: unknown) => env.api.call("POST", "/events", body);

  it("delivers a signed POST to every matching config; the same key again starts nothing", async () => {
    const exact = await env.createConfig({
      endpoint: receiver.url,
      eventTypes: ["ingest.order_paid"],
      secret: SECRET,
    });
    const wildcard = await env.createConfig({
      endpoint: receiver.url,
      eventTypes: ["ingest.*"],
      secret: SECRET,
    });
    await env.createConfig({ endpoint: receiver.url, eventTypes: ["other.order_paid"] });
    const event = env.event({ app: "INGEST", type: "ORDER_PAID", idempotency_key: `http-${Date.now()}` });

    const first = await post(event);
    expect(first.status, first.text).to.equal(202);
    expect(first.body.data).to.include({ type: "ingest.order_paid", configs: 2 });
    const ids = first.body.data.deliveries.map((d: { configID: string }) => d.configID).sort();
    expect(ids).to.deep.equal([exact.id, wildcard.id].sort());
    for (const d of first.body.data.deliveries) {
      expect(d.started).to.equal(true);
      expect(d.workflowID).to.equal(env.workflowId(d.configID, event.idempotency_key));
      expect((await env.temporal.workflow.getHandle(d.workflowID).result()).status).to.equal("success");
    }
    const mine = receiver.requests.filter(
      (r) => JSON.parse(r.body).idempotency_key === event.idempotency_key,
    );
    expect(mine).to.have.length(2);
    for (const r of mine) {
      expect(signedWith(SECRET, r)).to.equal(true);
    }

    const again = await post(event);
    expect(again.status, again.text).to.equal(200);
    expect(again.body.data.deliveries.map((d: { started: boolean }) => d.started)).to.deep.equal([
      false,
      false,
    ]);
    // What the broker would have started for the same message is the very same delivery.
    await env.publish(event);
    const marker = env.event({ app: "INGEST", type: "ORDER_PAID" });
    await env.publish(marker);
    await env.result(exact.id, marker.idempotency_key);
    expect(
      receiver.requests.filter((r) => JSON.parse(r.body).idempotency_key === event.idempotency_key),
    ).to.have.length(2);
  });

  it("accepts an event nothing subscribes to, starting nothing", async () => {
    const r = await post(env.event({ app: "nobody", type: "listens" }));
    expect(r.status, r.text).to.equal(202);
    expect(r.body.data).to.deep.equal({ type: "nobody.listens", configs: 0, deliveries: [] });
  });

  it("refuses what the consumer could never deliver, naming why", async () => {
    await env.createConfig({ endpoint: receiver.url, eventTypes: ["ingest.deep"] });
    let deep: unknown = 1;
    for (let i = 0; i < 200; i++) deep = [deep];
    for (const [body, status, says] of [
      [{ app: "ingest" }, 400, /missing string field "type"/],
      [[1, 2], 400, /not a JSON object/],
      [
        { type: "deep", app: "ingest", payload: deep },
        400,
        /nests 200 levels deep; deliveries take at most 128/,
      ],
      // Over what the parser reads: the 2 MiB event bound plus room for the envelope.
      [{ type: "big", app: "ingest", payload: "x".repeat(2 * 1024 * 1024 + 32 * 1024) }, 413, /larger than/],
    ] as const) {
      const r = await post(body);
      expect(r.status, r.text).to.equal(status);
      expect(r.body.errorMessage, r.text).to.match(says);
    }
    const metrics = await (await fetch(`${env.api.url}/metrics`)).text();
    expect(metrics).to.match(/webhooks_events_ingested_total\{result="accepted"\} [1-9]/);
    expect(metrics).to.match(/webhooks_events_ingested_total\{result="rejected"\} [1-9]/);
  });
});
