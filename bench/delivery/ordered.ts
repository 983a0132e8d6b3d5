import { mkdirSync, writeFileSync } from "node:fs";
import http from "node:http";
import type { AddressInfo } from "node:net";
import { connect } from "nats";
import { fromRoot } from "../../common/paths.js";
import { startWebhooks } from "../../test/support/webhooks-server.js";

// bench/delivery/ordered: ordered delivery (README "Ordered delivery") against unordered
// delivery of the same events in the same run: events/s (first publish to last arrival) and
// p99 latency (publish to arrival) for an unordered config, then ordered configs whose
// events spread over 1, 10 and 100 ordering keys. Each scenario has its own config and
// event type; events are published on NATS at full speed, one scenario after the other.
// Usage: node dist/bench/delivery/ordered.js [events per scenario]

const EVENTS = Number(process.argv[2] ?? 400);

interface Row {
  scenario: string;
  events: number;
  seconds: number;
  eventsPerSecond: number;
  p50Ms: number;
  p99Ms: number;
}

const percentile = (sorted: number[], p: number) =>
  sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)]!;

async function main() {
  const arrived = new Map<string, number>();
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c) => chunks.push(c));
    req.on("end", () => {
      const ik = (JSON.parse(Buffer.concat(chunks).toString()) as { idempotency_key: string })
        .idempotency_key;
      if (!arrived.has(ik)) arrived.set(ik, Date.now());
      res.writeHead(200).end();
    });
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  const endpoint = `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`;
  const topic = `bench-ordered-${Date.now()}`;
  const api = await startWebhooks({
    worker: true,
    args: [
      "--broker-topics",
      topic,
      "--nats-stream",
      `BENCHO_${Date.now()}`,
      "--audit-topic",
      "",
      "--log-level",
      "warn",
    ],
  });
  const nats = await connect({ servers: "nats://127.0.0.1:4222" });
  const js = nats.jetstream();
  const rows: Row[] = [];
  try {
    for (const [scenario, keys] of [
      ["unordered", 0],
      ["ordered, 1 key", 1],
      ["ordered, 10 keys", 10],
      ["ordered, 100 keys", 100],
    ] as const) {
      const type = scenario.replace(/\W+/g, "_");
      const created = await api.call("POST", "/configs", {
        endpoint,
        eventTypes: [`bench.${type}`],
        ...(keys ? { ordering: { enabled: true } } : {}),
      });
      if (created.status !== 200) throw new Error(created.text);
      const published = new Map<string, number>();
      const sends: Promise<unknown>[] = [];
      for (let i = 0; i < EVENTS; i++) {
        const ik = `${type}-${i}`;
        published.set(ik, Date.now());
        const event = {
          idempotency_key: ik,
          app: "bench",
          type,
          payload: { i },
          ...(keys ? { ordering_key: `k${i % keys}` } : {}),
        };
        sends.push(js.publish(topic, JSON.stringify(event)));
      }
      await Promise.all(sends);
      const first = Math.min(...published.values());
      while ([...published.keys()].some((ik) => !arrived.has(ik)))
        await new Promise((r) => setTimeout(r, 50));
      const latencies = [...published].map(([ik, at]) => arrived.get(ik)! - at).sort((a, b) => a - b);
      const seconds = (Math.max(...[...published.keys()].map((ik) => arrived.get(ik)!)) - first) / 1000;
      rows.push({
        scenario,
        events: EVENTS,
        seconds,
        eventsPerSecond: Math.round(EVENTS / seconds),
        p50Ms: percentile(latencies, 50),
        p99Ms: percentile(latencies, 99),
      });
      console.error(`${scenario}: done`);
    }
  } finally {
    await nats.close();
    await api.stop();
    server.close();
  }
  console.log("| scenario | events | seconds | events/s | p50 ms | p99 ms |\n|---|---|---|---|---|---|");
  for (const r of rows)
    console.log(
      `| ${r.scenario} | ${r.events} | ${r.seconds.toFixed(1)} | ${r.eventsPerSecond} | ${r.p50Ms} | ${r.p99Ms} |`,
    );
  mkdirSync(fromRoot("bench", "results"), { recursive: true });
  const file = fromRoot("bench", "results", "delivery-ordered.json");
  writeFileSync(
    file,
    `${JSON.stringify({ date: new Date().toISOString(), events: EVENTS, rows }, null, 2)}\n`,
  );
  console.log(`\nresults written to ${file}`);
  process.exit(0);
}

main().catch((err: Error) => {
  console.error(err.stack ?? err.message);
  process.exit(1);
});
