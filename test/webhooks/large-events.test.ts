import { expect } from "chai";
import { parseEventMessage } from "../../core/event-message.js";
import { MAX_EVENT_BYTES } from "../../core/start-limits.js";
import { eventIdOf } from "../../core/stored-events.js";
import { DeliveryEnv } from "../support/delivery-env.js";
import { eventually, sql } from "../support/poison.js";
import { Receiver, signedWith } from "../support/receiver.js";
import { deadLetterAt } from "../support/unstorable.js";

// Issue 34 point 8: events by reference. A 700 KB event (refused outright when deliveries
// carried their event: Temporal's 256 KiB) is delivered once over NATS and POST /events,
// stored once however many configs it goes to; one over the product's 2 MiB bound is
// refused with the bound named: a dead letter from NATS, 413 or 400 over HTTP.

const KB = 1000;
const MIB = 1024 * 1024;

describe("large events by reference (core/stored-events.ts)", function () {
  this.timeout(120_000);
  const env = new DeliveryEnv();
  const receiver = new Receiver();
  let configs: { id: string; secret: string }[];

  before(async () => {
    await receiver.start();
    await env.start();
    // Two configs: the event fans out to both and is stored once.
    configs = [
      await env.createConfig({ endpoint: `${receiver.url}/a` }),
      await env.createConfig({ endpoint: `${receiver.url}/b` }),
    ];
  });
  after(async () => {
    await env.stop();
    await receiver.stop();
  });

  const bigEvent = (bytes: number) => env.event({ payload: { blob: "x".repeat(bytes) } });
  const requestsFor = (key: string) =>
    receiver.requests.filter((r) => JSON.parse(r.body).idempotency_key === key);

  /** Each config got the event once, signed with its own secret, as the stored bytes. */
  async function expectDeliveredOnce(event: ReturnType<typeof bigEvent>) {
    await eventually("both deliveries", async () => requestsFor(event.idempotency_key).length >= 2, 60_000);
    for (const c of configs) {
      const result = await env.result(c.id, event.idempotency_key, 60_000);
      expect(result).to.include({ status: "success", attempts: 1 });
    }
    const received = requestsFor(event.idempotency_key);
    expect(received.map((r) => r.path).sort()).to.deep.equal(["/hook/a", "/hook/b"]);
    const body = JSON.stringify(parseEventMessage(Buffer.from(JSON.stringify(event))));
    for (const r of received) {
      expect(r.body).to.equal(body);
      expect(signedWith(configs[r.path === "/hook/a" ? 0 : 1]!.secret, r)).to.equal(true);
    }
    // One row in events for the fan-out; both attempt rows reference it, with no copy.
    const stored = await sql<{ id: string; bytes: number }>(
      env.api,
      "SELECT id, bytes FROM events WHERE id = $1",
      [eventIdOf(body)],
    );
    expect(stored).to.deep.equal([{ id: eventIdOf(body), bytes: Buffer.byteLength(body) }]);
    const rows = await sql<{ event_id: string; payload: string | null }>(
      env.api,
      "SELECT event_id, payload FROM attempts WHERE config_id = ANY($1) AND event_id = $2",
      [configs.map((c) => c.id), eventIdOf(body)],
    );
    expect(rows).to.deep.equal([
      { event_id: eventIdOf(body), payload: null },
      { event_id: eventIdOf(body), payload: null },
    ]);
    return body;
  }

  it("delivers a 700 KB event from NATS once to each config, verified by the receiver", async () => {
    const event = bigEvent(700 * KB);
    await env.publish(event);
    await expectDeliveredOnce(event);
  });

  it("delivers a 700 KB event from POST /events once to each config, and the API shows it as sent", async () => {
    const event = bigEvent(700 * KB);
    const r = await env.api.call("POST", "/events", event);
    expect(r.status, r.text).to.equal(202);
    const body = await expectDeliveredOnce(event);
    const webhookId = r.body.data.deliveries[0].webhookID;
    const shown = await env.api.call("GET", `/webhooks/${webhookId}`);
    expect(shown.status, shown.text).to.equal(200);
    expect(shown.body.data.attempts[0].payload).to.equal(body);
  });

  it("dead-letters a 3 MiB event from NATS naming the bound, and delivers the next event", async () => {
    const event = bigEvent(3 * MIB);
    const ack = await env.nats.jetstream().publish(env.topic, JSON.stringify(event));
    const position = `nats:${ack.stream}:${ack.seq}`;
    const next = env.event();
    await env.publish(next);
    let row: Awaited<ReturnType<typeof deadLetterAt>>;
    await eventually(
      "its dead letter",
      async () => {
        row = await deadLetterAt(env.api, position);
        return row !== undefined;
      },
      30_000,
    );
    expect(row!.kind).to.equal("permanent");
    expect(row!.reason).to.match(
      new RegExp(
        `^the event is \\d+ bytes as JSON; deliveries take at most ${MAX_EVENT_BYTES} \\(MAX_EVENT_BYTES, 2 MiB\\)$`,
      ),
    );
    expect(row!.message.length).to.equal(Buffer.byteLength(JSON.stringify(event)));
    await eventually(
      "the next event delivered",
      async () => requestsFor(next.idempotency_key).length === 2,
      30_000,
    );
    expect(requestsFor(event.idempotency_key)).to.have.length(0);
  });

  it("refuses a 3 MiB event over POST /events (413), and one just over the bound (400), naming the limit", async () => {
    const huge = await env.api.call("POST", "/events", bigEvent(3 * MIB));
    expect(huge.status, huge.text).to.equal(413);
    expect(huge.body.errorMessage).to.match(/^request body larger than the \d+ byte limit$/);
    // Within what the parser reads, over what a delivery takes: the event's own bound.
    const over = bigEvent(MAX_EVENT_BYTES);
    const r = await env.api.call("POST", "/events", over);
    expect(r.status, r.text).to.equal(400);
    expect(r.body.errorMessage).to.match(/deliveries take at most 2097152 \(MAX_EVENT_BYTES, 2 MiB\)$/);
    expect(requestsFor(over.idempotency_key)).to.have.length(0);
  });
});
