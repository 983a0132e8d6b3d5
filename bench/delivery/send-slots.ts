import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { stopTestTemporal } from "../../test/support/temporal.js";
import { startWebhooks, type WebhooksUnderTest } from "../../test/support/webhooks-server.js";

// bench/delivery/send-slots: what the scaling signals of docs/webhooks/scaling-workers.md read
// when send capacity is short and when it is doubled. One `serve --worker` in queue mode with
// `--max-concurrent-sends` N, then 2N, each given the same paced load of deliveries to a
// receiver that answers after a fixed delay; its /metrics is read every second. Printed per
// run: the sends queue's activity schedule-to-start latency (the SDK's histogram), the peak
// backlog count and age Temporal reported for the queue, the peak of send slots used, and
// accept to 2xx.
// Usage: node dist/bench/delivery/send-slots.js [slots=3] [events=150] [rate=10/s] [answer-ms=200]

const SLOTS = Number(process.argv[2] ?? 3);
const EVENTS = Number(process.argv[3] ?? 150);
const RATE = Number(process.argv[4] ?? 10);
const ANSWER_MS = Number(process.argv[5] ?? 200);
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** histogram_quantile over one series' cumulative buckets, as Prometheus computes it. */
function quantile(text: string, name: string, labelPart: string, q: number): number {
  const buckets: [number, number][] = [];
  for (const m of text.matchAll(new RegExp(`^${name}_bucket\\{([^}]*)\\} (\\S+)$`, "gm"))) {
    if (!m[1]!.includes(labelPart)) continue;
    const le = /le="([^"]+)"/.exec(m[1]!)![1]!;
    buckets.push([le === "+Inf" ? Number.POSITIVE_INFINITY : Number(le), Number(m[2])]);
  }
  buckets.sort((a, b) => a[0] - b[0]);
  const total = buckets.at(-1)?.[1] ?? 0;
  if (total === 0) return Number.NaN;
  let [lower, below] = [0, 0];
  for (const [le, count] of buckets) {
    if (count >= q * total) {
      if (le === Number.POSITIVE_INFINITY) return lower;
      return lower + ((le - lower) * (q * total - below)) / Math.max(1, count - below);
    }
    [lower, below] = [le, count];
  }
  return lower;
}

const gauge = (text: string, name: string, labelPart: string) =>
  Number(new RegExp(`^${name}\\{[^}]*${labelPart}[^}]*\\} (\\S+)$`, "m").exec(text)?.[1] ?? Number.NaN);

async function run(slots: number, endpoint: string, received: () => number) {
  const api: WebhooksUnderTest = await startWebhooks({
    worker: true,
    args: ["--send-mode", "queue", "--max-concurrent-sends", String(slots), "--no-consume"].concat([
      "--audit-topic",
      "",
      "--log-level",
      "warn",
      "--task-queue-stats-interval",
      "1s",
    ]),
  });
  try {
    const sends = `task_queue="${api.taskQueue}-sends"`;
    await api.call("POST", "/configs", { endpoint, eventTypes: ["bench.slots"] });
    const start = received();
    let peak = { backlog: 0, ageSeconds: 0, slotsUsed: 0 };
    const watch = setInterval(async () => {
      const text = await (await fetch(`${api.url}/metrics`)).text();
      const backlog = gauge(text, "webhooks_task_queue_backlog_tasks", sends);
      const age = gauge(text, "webhooks_task_queue_backlog_age_seconds", sends);
      const used = gauge(text, "temporal_worker_task_slots_used", `${sends},worker_type="ActivityWorker"`);
      peak = {
        backlog: Math.max(peak.backlog, backlog || 0),
        ageSeconds: Math.max(peak.ageSeconds, age || 0),
        slotsUsed: Math.max(peak.slotsUsed, used || 0),
      };
    }, 1000);
    const began = Date.now();
    for (let i = 0; i < EVENTS; i++) {
      await sleep(Math.max(0, began + (i * 1000) / RATE - Date.now()));
      const event = {
        idempotency_key: `slots-${slots}-${i}-${began}`,
        app: "bench",
        type: "slots",
        payload: {},
      };
      void api.call("POST", "/events", { ...event, date: new Date().toISOString() });
    }
    while (received() - start < EVENTS) await sleep(200);
    const seconds = (Date.now() - began) / 1000;
    await sleep(2500);
    clearInterval(watch);
    const text = await (await fetch(`${api.url}/metrics`)).text();
    const s2s = "temporal_activity_schedule_to_start_latency_seconds";
    const e2e = "webhooks_delivery_latency_seconds";
    const ms = (v: number) => Math.round(v * 1000);
    return {
      slots,
      seconds: Number(seconds.toFixed(1)),
      scheduleToStartP50Ms: ms(quantile(text, s2s, sends, 0.5)),
      scheduleToStartP95Ms: ms(quantile(text, s2s, sends, 0.95)),
      peakSlotsUsed: peak.slotsUsed,
      peakBacklog: peak.backlog,
      peakBacklogAgeS: Number(peak.ageSeconds.toFixed(1)),
      acceptTo2xxP50Ms: ms(quantile(text, e2e, 'outcome="delivered"', 0.5)),
      acceptTo2xxP95Ms: ms(quantile(text, e2e, 'outcome="delivered"', 0.95)),
    };
  } finally {
    await api.stop();
  }
}

async function main(): Promise<void> {
  let count = 0;
  const receiver = createServer((req, res) => {
    req.resume();
    req.on("end", () =>
      setTimeout(() => {
        count++;
        res.writeHead(200).end();
      }, ANSWER_MS),
    );
  });
  await new Promise<void>((r) => receiver.listen(0, "127.0.0.1", r));
  const endpoint = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hook`;
  const capacity = (slots: number) => (slots * 1000) / ANSWER_MS;
  console.log(`${EVENTS} events at ${RATE}/s, receiver answers after ${ANSWER_MS} ms`);
  for (const slots of [SLOTS, 2 * SLOTS]) {
    console.log(`--max-concurrent-sends ${slots} (about ${capacity(slots)} sends/s)`);
    console.log(JSON.stringify(await run(slots, endpoint, () => count)));
  }
  receiver.close();
  await stopTestTemporal();
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
