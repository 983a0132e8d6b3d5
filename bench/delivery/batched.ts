import { mkdirSync, writeFileSync } from "node:fs";
import http from "node:http";
import type { AddressInfo } from "node:net";
import { connect } from "nats";
import { fromRoot } from "../../common/paths.js";
import { startWebhooks } from "../../test/support/webhooks-server.js";

// bench/delivery/batched: batched delivery (README "Batched delivery") against unbatched
// delivery of the same events in the same run: events/s from the first publish to the last
// event's arrival, and the POSTs the receiver got. Each scenario has its own config and
// event type; events are published on NATS at full speed, one scenario after the other.
// Usage: node dist/bench/delivery/batched.js [events per scenario]

const EVENTS = Number(process.argv[2] ?? 2000);
const SCENARIOS = [
  ["unbatched", null],
  ["batched (50, 200 ms)", { maxEvents: 50, maxWaitMs: 200 }],
] as const;

async function main() {
  /** Arrival time of each event (by idempotency key), and POSTs per event type. */
  const arrived = new Map<string, number>();
  const posts = new Map<string, number>();
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c) => chunks.push(c));
    req.on("end", () => {
      const body = JSON.parse(Buffer.concat(chunks).toString()) as unknown;
      const events = (Array.isArray(body) ? body : [body]) as { idempotency_key: string; type: string }[];
      const now = Date.now();
      for (const e of events) if (!arrived.has(e.idempotency_key)) arrived.set(e.idempotency_key, now);
      const type = events[0]?.type ?? "";
      posts.set(type, (posts.get(type) ?? 0) + 1);
      res.writeHead(200).end();
    });
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  const endpoint = `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`;
  const topic = `bench-batched-${Date.now()}`;
  const api = await startWebhooks({
    worker: true,
    args: [
      "--broker-topics",
      topic,
      "--nats-stream",
      `BENCHB_${Date.now()}`,
      "--audit-topic",
      "",
      "--log-level",
      "warn",
    ],
  });
  const nats = await connect({ servers: "nats://127.0.0.1:4222" });
  const js = nats.jetstream();
  const rows: {
    scenario: string;
    events: number;
    posts: number;
    seconds: number;
    eventsPerSecond: number;
  }[] = [];
  try {
    for (const [scenario, batch] of SCENARIOS) {
      const type = scenario.replace(/\W+/g, "_");
      const created = await api.call("POST", "/configs", {
        endpoint,
        eventTypes: [`bench.${type}`],
        ...(batch ? { batch } : {}),
      });
      if (created.status !== 200) throw new Error(created.text);
      const iks = Array.from({ length: EVENTS }, (_, i) => `${type}-${i}`);
      const first = Date.now();
      await Promise.all(
        iks.map((ik, i) =>
          js.publish(topic, JSON.stringify({ idempotency_key: ik, app: "bench", type, payload: { i } })),
        ),
      );
      while (iks.some((ik) => !arrived.has(ik))) await new Promise((r) => setTimeout(r, 50));
      const seconds = (Math.max(...iks.map((ik) => arrived.get(ik)!)) - first) / 1000;
      rows.push({
        scenario,
        events: EVENTS,
        posts: posts.get(type) ?? 0,
        seconds,
        eventsPerSecond: Math.round(EVENTS / seconds),
      });
      console.error(`${scenario}: done`);
    }
  } finally {
    await nats.close();
    await api.stop();
    server.close();
  }
  console.log("| scenario | events | POSTs | seconds | events/s |\n|---|---|---|---|---|");
  for (const r of rows)
    console.log(
      `| ${r.scenario} | ${r.events} | ${r.posts} | ${r.seconds.toFixed(1)} | ${r.eventsPerSecond} |`,
    );
  const [plain, batched] = rows;
  if (plain && batched)
    console.log(`\nbatched / unbatched: ${(batched.eventsPerSecond / plain.eventsPerSecond).toFixed(1)}x`);
  mkdirSync(fromRoot("bench", "results"), { recursive: true });
  const file = fromRoot("bench", "results", "delivery-batched.json");
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
