import { mkdirSync, writeFileSync } from "node:fs";
import http from "node:http";
import type { AddressInfo } from "node:net";
import { Client, Connection } from "@temporalio/client";
import { connect } from "nats";
import pg from "pg";
import { fromRoot } from "../../common/paths.js";
import { orderedWorkflowId } from "../../core/ordering.js";
import { stopTestTemporal } from "../../test/support/temporal.js";
import { startWebhooks } from "../../test/support/webhooks-server.js";

// bench/delivery/ordered-backlog: one ordering key's backlog at Temporal's real limits
// (docs/webhooks/ordering-and-batching.md#ordered-delivery). N events of one key are
// published on NATS at full speed while the receiver answers 503; once every event is
// accepted (a backlog row each) the receiver answers 200 and the key drains. Reported: the
// time to accept and to drain, events/s while draining, whether every event arrived once and
// in order, dead letters, and the sequencer's largest run (history events, signals, input
// bytes) against the bounds a key workflow must stay under (10 000 signals per run, 2 MB
// payloads, ~50 000 history events).
// Usage: node dist/bench/delivery/ordered-backlog.js [events, default 5000]

const EVENTS = Number(process.argv[2] ?? 5_000);

interface RunShape {
  runs: number;
  maxHistoryEvents: number;
  maxSignals: number;
  maxInputBytes: number;
}

async function main() {
  let up = false;
  const arrived: number[] = [];
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c) => chunks.push(c));
    req.on("end", () => {
      if (!up) return void res.writeHead(503).end();
      arrived.push(
        (JSON.parse(Buffer.concat(chunks).toString()) as { payload: { seq: number } }).payload.seq,
      );
      res.writeHead(200).end();
    });
  });
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
    const backlog = async () =>
      (await db.query("SELECT count(*)::int AS n FROM ordered_backlog WHERE config_id = $1", [configId]))
        .rows[0].n as number;
    const started = Date.now();
    const js = nats.jetstream();
    for (let seq = 1; seq <= EVENTS; seq += 500)
      await Promise.all(
        Array.from({ length: Math.min(500, EVENTS - seq + 1) }, (_, i) =>
          js.publish(
            topic,
            JSON.stringify({
              idempotency_key: `backlog-${seq + i}`,
              date: new Date().toISOString(),
              app: "bench",
              version: "v2",
              type: "BACKLOG",
              ordering_key: "one",
              payload: { seq: seq + i },
            }),
          ),
        ),
      );
    await waitUntil(
      async () => (await backlog()) >= EVENTS,
      "accepted",
      () => backlog(),
    );
    const acceptedS = (Date.now() - started) / 1000;
    up = true;
    const draining = Date.now();
    await waitUntil(
      async () => arrived.length >= EVENTS,
      "drained",
      async () => arrived.length,
    );
    const drainS = (Date.now() - draining) / 1000;
    const inOrder = arrived.every((seq, i) => seq === i + 1);
    const deadLetters = (await api.call("GET", "/dead-letters")).body.cursor.data.length as number;
    const connection = await Connection.connect({ address: api.temporalAddress });
    const shape = await runShape(new Client({ connection }), orderedWorkflowId(configId, "one"));
    await connection.close();
    const row = {
      events: EVENTS,
      acceptedSeconds: acceptedS,
      drainSeconds: drainS,
      drainEventsPerSecond: Math.round(EVENTS / drainS),
      arrivedOnceInOrder: inOrder && arrived.length === EVENTS,
      deadLetters,
      ...shape,
    };
    console.log(
      "| events | accepted in s | drained in s | events/s draining | once, in order | dead letters | runs | largest run: history events / signals / input bytes |",
    );
    console.log("|---|---|---|---|---|---|---|---|");
    console.log(
      `| ${EVENTS} | ${acceptedS.toFixed(1)} | ${drainS.toFixed(1)} | ${row.drainEventsPerSecond} | ${row.arrivedOnceInOrder} | ${deadLetters} | ${shape.runs} | ${shape.maxHistoryEvents} / ${shape.maxSignals} / ${shape.maxInputBytes} |`,
    );
    mkdirSync(fromRoot("bench", "results"), { recursive: true });
    const file = fromRoot("bench", "results", "delivery-ordered-backlog.json");
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
