// The JetStream consumer under a burst, on the real NATS server: it never holds more
// messages than its handler slots, handles each once, and refills its slots in batches.
// The consumer connection's publishes (acknowledgements and pull requests) are read from
// the server's own monitoring endpoint (`nats-server -m 8222`, scripts/setup.sh).

import { expect } from "chai";
import { connect } from "nats";
import { createLogger } from "../../common/logger.js";
import { NatsConsumer } from "../../core/broker/nats.js";

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

describe("NATS consumer under a burst", function () {
  this.timeout(60_000);

  it("holds at most its slots, handles every message once and refills a quarter of its slots per pull", async () => {
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
});
