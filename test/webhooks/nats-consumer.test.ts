// The JetStream consumer on the real NATS server: under a burst it never holds more
// messages than its handler slots, handles each once, and refills its slots in batches;
// after a process died it hands the messages left over in the stream's order.
// The consumer connection's publishes (acknowledgements and pull requests) are read from
// the server's own monitoring endpoint (`nats-server -m 8222`, scripts/setup.sh).

import { expect } from "chai";
import { connect, type JsMsg } from "nats";
import { createLogger } from "../../common/logger.js";
import { consumerName, NatsConsumer } from "../../core/broker/nats.js";

const MONITOR = "http://127.0.0.1:8222";

/** Messages the server received from the named client connection. */
async function publishedBy(name: string): Promise<number> {
  const connz = (await (await fetch(`${MONITOR}/connz?limit=1024`)).json()) as {
    connections: { name?: string; in_msgs: number }[];
  };
  const conn = connz.connections.find((c) => c.name === name);
  if (!conn) throw new Error(`no NATS connection named ${name}`);
  return conn.in_msgs;
}

describe("the NATS consumer", function () {
  this.timeout(60_000);

  it("under a burst, holds at most its slots, handles every message once and refills a quarter of its slots per pull", async () => {
    const id = Date.now();
    const topic = `consumer-burst-${id}`;
    const durable = `burst-${id}`;
    const concurrency = 16;
    const messages = 200;
    const consumer = new NatsConsumer({
      url: "nats://127.0.0.1:4222",
      auth: {},
      stream: `CONSUMER_BURST_${id}`,
      limits: { maxAgeMs: 0, maxBytes: 0, maxMsgs: 0 },
      logger: createLogger("test", "warn"),
      durable,
      topics: [topic],
      concurrency,
      redelivery: { maxBrokerDeliveries: 5, backoffMs: [30_000], stuckAfterMs: 0 },
    });
    let inFlight = 0;
    let most = 0;
    const seen = new Map<string, number>();
    // Handlers finish one at a time, one every 3 ms, so the slots stay full while the
    // burst lasts and a consumer that fetched for every freed slot would pull about once
    // per message.
    const waiting: (() => void)[] = [];
    const releaser = setInterval(() => waiting.shift()?.(), 3);
    await consumer.start(async (msg) => {
      inFlight++;
      most = Math.max(most, inFlight);
      const key = Buffer.from(msg.data).toString();
      seen.set(key, (seen.get(key) ?? 0) + 1);
      await new Promise<void>((r) => waiting.push(r));
      inFlight--;
    });
    const nc = await connect({ servers: "nats://127.0.0.1:4222" });
    try {
      const js = nc.jetstream();
      await Promise.all(Array.from({ length: messages }, (_, i) => js.publish(topic, String(i))));
      const deadline = Date.now() + 30_000;
      while (seen.size < messages && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
      // Acknowledgements are sent after the handler returns.
      await new Promise((r) => setTimeout(r, 300));
      const published = await publishedBy(`webhooks-consumer-${durable}`);

      expect(seen.size).to.equal(messages);
      expect([...seen.values()].every((n) => n === 1)).to.equal(true);
      expect(most).to.be.at.most(concurrency);
      expect(most).to.equal(concurrency, "the burst should fill every slot");
      // One acknowledgement per message, and pull requests for a quarter of the slots
      // (4 here) or more at a time: at most messages / 4 of them, plus the set-up requests.
      const pulls = published - messages;
      expect(pulls).to.be.at.most(messages / 4 + 10);
    } finally {
      clearInterval(releaser);
      for (const release of waiting.splice(0)) release();
      await consumer.stop();
      await (await nc.jetstreamManager()).streams.delete(`CONSUMER_BURST_${id}`).catch(() => {});
      await nc.close();
    }
  });

  it("hands the messages a dead process left over in stream order, not in the order their ack waits ran out", async () => {
    const id = Date.now();
    const topic = `consumer-restart-${id}`;
    const stream = `CONSUMER_RESTART_${id}`;
    const durable = `restart-${id}`;
    const options = {
      url: "nats://127.0.0.1:4222",
      auth: {},
      stream,
      limits: { maxAgeMs: 0, maxBytes: 0, maxMsgs: 0 },
      logger: createLogger("test", "warn"),
      durable,
      topics: [topic],
      concurrency: 16,
      // An ack wait of 2 s.
      redelivery: { maxBrokerDeliveries: 5, backoffMs: [2_000], stuckAfterMs: 0 },
    };
    const nc = await connect({ servers: "nats://127.0.0.1:4222" });
    let second: NatsConsumer | undefined;
    const dying = await connect({ servers: "nats://127.0.0.1:4222" });
    try {
      // The durable consumer, as the product makes it.
      const first = new NatsConsumer(options);
      await first.start(async () => {});
      await first.stop();
      const js = nc.jetstream();
      for (let i = 1; i <= 10; i++) await js.publish(topic, String(i));
      // A process takes all ten and dies without acknowledging them; just before, it told
      // JetStream it was still at work on the first five, so their ack waits run out last.
      const pulled = await dying.jetstream().consumers.get(stream, consumerName(durable, topic));
      const taken: JsMsg[] = [];
      for await (const m of await pulled.fetch({ max_messages: 10, expires: 5_000 })) {
        taken.push(m);
        if (taken.length === 10) break;
      }
      expect(taken.map((m) => m.seq)).to.have.length(10);
      await new Promise((r) => setTimeout(r, 1000));
      for (const m of taken.slice(0, 5)) m.working();
      await dying.flush();
      await dying.close();

      const handled: string[] = [];
      second = new NatsConsumer(options);
      await second.start(async (msg) => {
        handled.push(Buffer.from(msg.data).toString());
      });
      const deadline = Date.now() + 30_000;
      while (handled.length < 10 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
      expect(handled).to.deep.equal(["1", "2", "3", "4", "5", "6", "7", "8", "9", "10"]);
    } finally {
      if (!dying.isClosed()) await dying.close();
      await second?.stop();
      await (await nc.jetstreamManager()).streams.delete(stream).catch(() => {});
      await nc.close();
    }
  });
});
