import { mkdirSync, writeFileSync } from "node:fs";
import http from "node:http";
import type { AddressInfo } from "node:net";
import { parseArgs } from "node:util";
import { Client, Connection } from "@temporalio/client";
import { connect } from "nats";
import pg from "pg";
import { fromRoot } from "../../common/paths.js";
import { orderedWorkflowId } from "../../core/ordering.js";
import { stopTestTemporal } from "../../test/support/temporal.js";
import { startWebhooks } from "../../test/support/webhooks-server.js";
import { serialChildrenPerSecond } from "./serial-floor.js";

// bench/delivery/ordered-backlog: ordered keys' backlogs at Temporal's real limits
// (docs/webhooks/ordering-and-batching.md#ordered-delivery). N events to each of K keys are
// published on NATS at full speed, round-robin over the keys. With an outage (the default
// for one key) the receiver answers 503 until every event is accepted (a backlog row each),
// then answers 200 and the keys drain; without one it answers from the start. The receiver
// takes a random time in --receiver-ms before each answer. Reported: the time to accept and
// to drain, events/s while draining, whether every event arrived once and in its key's
// order, dead letters, and the sequencers' largest run (history events, signals, input
// bytes; a sample of keys) against the bounds a key workflow must stay under (10 000
// signals per run, 2 MB payloads, ~50 000 history events). With one key, the floor beside
// it: a child workflow per event in series on the same server (serial-floor.ts).
// Usage: node dist/bench/delivery/ordered-backlog.js [events per key, default 5000]
//   [--keys K] [--receiver-ms A-B] [--outage | --no-outage]
// e.g. `... 100 --keys 1000 --receiver-ms 20-80 --no-outage` (1 000 keys x 100 events).

const { values: flags, positionals } = parseArgs({
  allowPositionals: true,
  options: {
    keys: { type: "string", default: "1" },
    "receiver-ms": { type: "string", default: "0-0" },
    outage: { type: "boolean" },
    "no-outage": { type: "boolean" },
    help: { type: "boolean", short: "h" },
  },
});
if (flags.help) {
  console.log(
    "usage: ordered-backlog.js [events per key, default 5000] [--keys K] [--receiver-ms A-B] [--outage | --no-outage]",
  );
  process.exit(0);
}
const PER_KEY = Number(positionals[0] ?? 5_000);
const KEYS = Number(flags.keys);
const [MIN_MS, MAX_MS] = String(flags["receiver-ms"]).split("-").map(Number) as [number, number];
const OUTAGE = flags["no-outage"] ? false : (flags.outage ?? KEYS === 1);
const EVENTS = PER_KEY * KEYS;
if (![PER_KEY, KEYS, MIN_MS, MAX_MS].every((n) => Number.isInteger(n) && n >= 0) || MAX_MS < MIN_MS)
  throw new Error("events per key, --keys and --receiver-ms A-B must be whole numbers, A <= B");
/** Keys whose sequencer runs are read for the shape (reading all of a thousand takes long). */
const SHAPE_SAMPLE = 20;
/** Children of the one-key floor at most: they are one parent's history. */
const FLOOR_CHILDREN = 2000;

interface RunShape {
  runs: number;
  maxHistoryEvents: number;
  maxSignals: number;
  maxInputBytes: number;
}

const keyOf = (k: number) => `key-${k}`;

async function main() {
  let up = !OUTAGE;
  /** Per key, the seqs in the order they arrived (a repeat counts again). */
  const arrived = new Map<string, number[]>();
  let arrivals = 0;
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c) => chunks.push(c));
    req.on("end", () => {
      if (!up) return void res.writeHead(503).end();
      const { payload } = JSON.parse(Buffer.concat(chunks).toString()) as {
        payload: { key: string; seq: number };
      };
      const delay = MIN_MS + Math.floor(Math.random() * (MAX_MS - MIN_MS + 1));
      setTimeout(() => {
        const seqs = arrived.get(payload.key) ?? [];
        seqs.push(payload.seq);
        arrived.set(payload.key, seqs);
        arrivals++;
        res.writeHead(200).end();
      }, delay);
    });
  });
  server.maxConnections = 10_000;
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  const endpoint = `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`;
  const topic = `bench-backlog-${Date.now()}`;
  const api = await startWebhooks({
    worker: true,
    args: [
      ...["--broker-topics", topic, "--nats-stream", `BENCHB_${Date.now()}`, "--audit-topic", ""],
      ...["--log-level", "warn", "--min-backoff-delay", "1s", "--max-backoff-delay", "5s"],
      ...["--max-attempts", "1000"],
    ],
  });
  const db = new pg.Pool({ connectionString: api.db.url, max: 2 });
  const nats = await connect({ servers: "nats://127.0.0.1:4222" });
  try {
    const created = await api.call("POST", "/configs", {
      endpoint,
      eventTypes: ["bench.backlog"],
      ordering: { enabled: true },
    });
    if (created.status !== 200) throw new Error(created.text);
    const configId = created.body.data.id as string;
    const accepted = async () =>
      (
        await db.query("SELECT (SELECT count(*)::int FROM unsent_deliveries WHERE config_id = $1) AS n", [
          configId,
        ])
      ).rows[0].n as number;
    const started = Date.now();
    const js = nats.jetstream();
    const events = Array.from({ length: EVENTS }, (_, i) => ({
      key: keyOf(i % KEYS),
      seq: Math.floor(i / KEYS) + 1,
    }));
    for (let at = 0; at < EVENTS; at += 500)
      await Promise.all(
        events.slice(at, at + 500).map(({ key, seq }) =>
          js.publish(
            topic,
            JSON.stringify({
              idempotency_key: `backlog-${key}-${seq}`,
              date: new Date().toISOString(),
              app: "bench",
              version: "v2",
              type: "BACKLOG",
              ordering_key: key,
              payload: { key, seq },
            }),
          ),
        ),
      );
    await waitUntil(
      async () => (await accepted()) >= EVENTS,
      "accepted",
      () => accepted(),
    );
    const acceptedS = (Date.now() - started) / 1000;
    up = true;
    // Without an outage the keys drain while events are published: counted from the first.
    const draining = OUTAGE ? Date.now() : started;
    await waitUntil(
      async () => arrivals >= EVENTS,
      "drained",
      async () => arrivals,
    );
    const drainS = (Date.now() - draining) / 1000;
    // Each key: every seq once, 1..N in order.
    const outOfOrder = [...Array(KEYS).keys()].filter((k) => {
      const seqs = arrived.get(keyOf(k)) ?? [];
      return seqs.length !== PER_KEY || seqs.some((seq, i) => seq !== i + 1);
    }).length;
    const deadLetters = (await api.call("GET", "/dead-letters")).body.cursor.data.length as number;
    const connection = await Connection.connect({ address: api.temporalAddress });
    const temporal = new Client({ connection });
    const shape: RunShape = { runs: 0, maxHistoryEvents: 0, maxSignals: 0, maxInputBytes: 0 };
    for (let k = 0; k < Math.min(KEYS, SHAPE_SAMPLE); k++) {
      const one = await runShape(temporal, orderedWorkflowId(configId, keyOf(k)));
      shape.runs = Math.max(shape.runs, one.runs);
      shape.maxHistoryEvents = Math.max(shape.maxHistoryEvents, one.maxHistoryEvents);
      shape.maxSignals = Math.max(shape.maxSignals, one.maxSignals);
      shape.maxInputBytes = Math.max(shape.maxInputBytes, one.maxInputBytes);
    }
    await connection.close();
    // One key: beside it, the floor of a child workflow per event on the same server.
    const floor =
      KEYS === 1
        ? await serialChildrenPerSecond(api.temporalAddress, Math.min(EVENTS, FLOOR_CHILDREN))
        : undefined;
    const row = {
      keys: KEYS,
      eventsPerKey: PER_KEY,
      events: EVENTS,
      receiverMs: [MIN_MS, MAX_MS],
      outage: OUTAGE,
      acceptedSeconds: acceptedS,
      drainSeconds: drainS,
      drainEventsPerSecond: Math.round(EVENTS / drainS),
      arrivedOnceInOrder: outOfOrder === 0 && arrivals === EVENTS,
      keysOutOfOrder: outOfOrder,
      arrivals,
      deadLetters,
      ...shape,
      ...(floor
        ? { childWorkflowFloorPerSecond: Math.round(floor), keyOverFloor: EVENTS / drainS / floor }
        : {}),
    };
    console.log(
      "| keys x events | receiver ms | outage | accepted in s | drained in s | events/s draining | once, in order | dead letters | most runs of a key | largest run: history events / signals / input bytes |",
    );
    console.log("|---|---|---|---|---|---|---|---|---|---|");
    console.log(
      `| ${KEYS} x ${PER_KEY} | ${MIN_MS}-${MAX_MS} | ${OUTAGE ? "yes" : "no"} | ${acceptedS.toFixed(1)} | ${drainS.toFixed(1)} | ${row.drainEventsPerSecond} | ${row.arrivedOnceInOrder} | ${deadLetters} | ${shape.runs} | ${shape.maxHistoryEvents} / ${shape.maxSignals} / ${shape.maxInputBytes} |`,
    );
    if (row.keyOverFloor)
      console.log(
        `one key: ${row.drainEventsPerSecond} events/s; a child workflow per event in series on the same server: ${row.childWorkflowFloorPerSecond}/s; ratio ${row.keyOverFloor.toFixed(2)}`,
      );
    mkdirSync(fromRoot("bench", "results"), { recursive: true });
    const file = fromRoot("bench", "results", `delivery-ordered-backlog-${KEYS}x${PER_KEY}.json`);
    writeFileSync(file, `${JSON.stringify({ at: new Date().toISOString(), ...row }, null, 2)}\n`);
    console.log(`results written to ${file}`);
  } finally {
    await nats.close();
    await db.end();
    await api.stop();
    server.close();
    await stopTestTemporal();
  }
}

/** Waits, printing progress every 10 s, for at most an hour. */
async function waitUntil(ok: () => Promise<boolean>, what: string, count: () => Promise<number>) {
  const end = Date.now() + 3_600_000;
  let said = Date.now();
  while (!(await ok())) {
    if (Date.now() > end) throw new Error(`not ${what} within an hour`);
    if (Date.now() - said > 10_000) {
      process.stderr.write(`${what}: ${await count()} of ${EVENTS}\n`);
      said = Date.now();
    }
    await new Promise((r) => setTimeout(r, 500));
  }
}

/** Every run of the key's sequencer: how many, and the largest history, signal count and input. */
async function runShape(temporal: Client, id: string): Promise<RunShape> {
  const shape: RunShape = { runs: 0, maxHistoryEvents: 0, maxSignals: 0, maxInputBytes: 0 };
  for await (const run of temporal.workflow.list({ query: `WorkflowId = "${id}"` })) {
    shape.runs++;
    const events = (await temporal.workflow.getHandle(id, run.runId).fetchHistory()).events ?? [];
    const input = events[0]?.workflowExecutionStartedEventAttributes?.input?.payloads ?? [];
    shape.maxHistoryEvents = Math.max(shape.maxHistoryEvents, events.length);
    shape.maxSignals = Math.max(
      shape.maxSignals,
      events.filter((e) => e.workflowExecutionSignaledEventAttributes).length,
    );
    shape.maxInputBytes = Math.max(
      shape.maxInputBytes,
      input.reduce((n, p) => n + (p.data?.length ?? 0), 0),
    );
  }
  return shape;
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
