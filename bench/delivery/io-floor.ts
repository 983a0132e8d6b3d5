import { existsSync, readFileSync } from "node:fs";
import { mkdir, writeFile } from "node:fs/promises";
import { AckPolicy, connect } from "nats";
import { fromRoot } from "../../common/paths.js";
import { parseEventMessage } from "../../core/event-message.js";
import { CpuMeter } from "../support/cpu-by-process.js";
import { openDeliveryIo } from "./delivery-io.js";

// bench/delivery/io-floor: the input and output a delivery cannot skip, without Temporal.
// Per event, with the product's own functions and the delivery bench's harness: the event
// published to JetStream (acknowledged), pulled and acknowledged, the consumer's query of
// matching configs, the send's read of its config, the signed POST to a receiver that
// verifies it, the attempt row's INSERT. CPU per event is read from /proc for this process
// (publisher, consumer, sender and receiver), PostgreSQL and NATS. With the no-op floor of
// bench/delivery/temporal-floor (its last JSON), it prints what that I/O alone leaves of
// the floor: floor CPU / (floor CPU + I/O CPU), the most deliveries can reach on this
// machine if all the rest of their code cost nothing.
// Usage: node dist/bench/delivery/io-floor.js [events=2000]

const EVENTS = Number(process.argv[2] ?? 2000);
/** As many at once as the worker has deliveries in flight by default. */
const CONCURRENCY = 32;

async function main(): Promise<void> {
  const io = await openDeliveryIo();

  const nc = await connect({ servers: "nats://127.0.0.1:4222" });
  const jsm = await nc.jetstreamManager();
  const stream = `IOFLOOR_${Date.now()}`;
  const subject = `io-floor-${Date.now()}`;
  await jsm.streams.add({ name: stream, subjects: [subject] });
  await jsm.consumers.add(stream, { durable_name: "io", ack_policy: AckPolicy.Explicit });
  const js = nc.jetstream();

  const cpu = new CpuMeter((pid, comm) =>
    pid === process.pid
      ? "bench process: publisher, consumer, sender, receiver"
      : comm === "postgres"
        ? "PostgreSQL"
        : comm === "nats-server"
          ? "NATS"
          : undefined,
  );

  /** What the worker does for one event to one config, minus Temporal (a queue-mode first send). */
  const deliver = async (data: Uint8Array) => {
    const event = parseEventMessage(data);
    const [target] = await io.matchConfigs(event.type);
    await io.send(target!.id, JSON.stringify(event), event.idempotency_key, false);
  };

  const run = async (n: number) => {
    const consumer = await js.consumers.get(stream, "io");
    const messages = await consumer.consume({ max_messages: CONCURRENCY });
    let done = 0;
    let inHand = 0;
    let freed: (() => void) | undefined;
    const finished = new Promise<void>((resolve, reject) => {
      void (async () => {
        for await (const m of messages) {
          // At most CONCURRENCY in hand, as the worker's in-flight bound allows.
          while (inHand >= CONCURRENCY) await new Promise<void>((r) => (freed = r));
          inHand++;
          deliver(m.data)
            .then(() => {
              m.ack();
              inHand--;
              freed?.();
              if (++done === n) resolve();
            })
            .catch(reject);
        }
      })();
    });
    const pubs: Promise<unknown>[] = [];
    for (let i = 0; i < n; i++)
      pubs.push(
        js.publish(
          subject,
          JSON.stringify({
            idempotency_key: `io-${Date.now()}-${i}`,
            app: "bench",
            type: "ok",
            payload: { i, sentAt: Date.now() },
          }),
        ),
      );
    await Promise.all(pubs);
    await finished;
    await messages.close();
  };

  process.stderr.write("warm-up…\n");
  await run(Math.min(500, EVENTS));
  process.stderr.write(`${EVENTS} events…\n`);
  cpu.start();
  const started = Date.now();
  await run(EVENTS);
  const seconds = (Date.now() - started) / 1000;
  const used = cpu.delta();
  const perEvent = Object.fromEntries(Object.entries(used).map(([k, ms]) => [k, ms / EVENTS]));
  const ioMs = Object.values(perEvent).reduce((a, b) => a + b, 0);

  console.log(
    `\nI/O of a delivery without Temporal: ${EVENTS} events, ${CONCURRENCY} at a time, ${(EVENTS / seconds).toFixed(0)}/s (bad signatures: ${io.badSignatures()}, received ${io.received()})\n`,
  );
  console.log("| component | CPU ms/event |");
  console.log("|---|---:|");
  for (const [k, ms] of Object.entries(perEvent)) console.log(`| ${k} | ${ms.toFixed(2)} |`);
  console.log(`| all | ${ioMs.toFixed(2)} |`);

  // What this I/O leaves of each floor measured last (temporal-floor.js on either server).
  const floors = [];
  for (const [server, file] of [
    ["dev server", "delivery-temporal-floor.json"],
    ["production server", "delivery-temporal-floor-server.json"],
  ] as const) {
    const path = fromRoot("bench", "results", file);
    if (!existsSync(path)) continue;
    const { rows: variants, date } = JSON.parse(readFileSync(path, "utf8"));
    for (const [mode, index] of [
      ["queue", 1],
      ["local", 3],
    ] as const) {
      const v = variants[index];
      if (!v) continue;
      const floorMs = v.serverMs + v.workerMs + v.postgresMs;
      floors.push({ server, mode, date, floorMs, ceiling: floorMs / (floorMs + ioMs) });
    }
  }
  if (floors.length) {
    console.log(
      "\n| floor (temporal-floor.js, eager start) | floor CPU ms/wf | floor / (floor + this I/O) |",
    );
    console.log("|---|---:|---:|");
    for (const f of floors)
      console.log(
        `| ${f.server}, --send-mode ${f.mode} (${f.date}) | ${f.floorMs.toFixed(1)} | ${f.ceiling.toFixed(2)} |`,
      );
  }
  await mkdir(fromRoot("bench", "results"), { recursive: true });
  const out = fromRoot("bench", "results", "delivery-io-floor.json");
  await writeFile(
    out,
    `${JSON.stringify({ date: new Date().toISOString(), events: EVENTS, perSecond: EVENTS / seconds, perEvent, ioMs, floors }, null, 2)}\n`,
  );
  console.log(`wrote ${out}`);

  await jsm.streams.delete(stream);
  await nc.close();
  await io.close();
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
