// tags: @temporal-server (also run on the production Temporal server: npm run test:temporal-server)
import { randomBytes } from "node:crypto";
import { Client, Connection } from "@temporalio/client";
import { expect } from "chai";
import { pino } from "pino";
import { registry } from "../../core/metrics.js";
import {
  type DescribeTaskQueue,
  readQueueStats,
  Sampler,
  type ServiceQueue,
} from "../../workers/task-queue-stats.js";
import { DeliveryEnv } from "../support/delivery-env.js";
import { Receiver } from "../support/receiver.js";
import { until } from "../support/until.js";
import { startWebhooks, type WebhooksUnderTest } from "../support/webhooks-server.js";

const NIL_TENANT = "00000000-0000-0000-0000-000000000000";

/** The values of `name`'s samples whose labels include `labels`, from a Prometheus text page. */
function samples(text: string, name: string, labels: Record<string, string> = {}): number[] {
  const values: number[] = [];
  for (const line of text.split("\n")) {
    const m = /^([A-Za-z_:][\w:]*)(?:\{(.*)\})? (\S+)$/.exec(line);
    if (m?.[1] !== name) continue;
    const got = Object.fromEntries(
      [...(m[2] ?? "").matchAll(/(\w+)="((?:[^"\\]|\\.)*)"/g)].map((x) => [x[1], x[2]]),
    );
    if (Object.entries(labels).every(([k, v]) => got[k] === v)) values.push(Number(m[3]));
  }
  return values;
}
const one = (text: string, name: string, labels: Record<string, string> = {}) =>
  samples(text, name, labels)[0] ?? Number.NaN;
const scrape = async (url: string) => (await fetch(`${url}/metrics`)).text();

/**
 * What operators scale and alert on, from /metrics of real processes on the test Temporal
 * server and PostgreSQL: the SDK's worker metrics beside the product's, the backlog Temporal
 * reports per task queue (read by one process at a time), and accept to end of delivery.
 */
describe("scaling metrics", function () {
  this.timeout(180_000);

  describe("one worker process", () => {
    const env = new DeliveryEnv();
    let receiver: Receiver;
    before(async () => {
      await env.start(["--delivery-latency-tenants", "1", "--task-queue-stats-interval", "1s"]);
      receiver = await new Receiver().start();
      // /gone refuses for good; /flaky fails its first POST of each event, then takes it.
      const seen = new Set<string>();
      receiver.respond = (r, res) => {
        const retried = seen.has(r.body);
        seen.add(r.body);
        const status = r.path.endsWith("/gone") ? 410 : r.path.endsWith("/flaky") && !retried ? 503 : 200;
        res.writeHead(status).end("ok");
      };
    });
    after(async () => {
      await receiver?.stop();
      await env.stop();
    });
    const latency = (text: string, tenant: string, outcome: string) =>
      one(text, "webhooks_delivery_latency_seconds_count", { tenant, outcome });

    it("observes accept to end of delivery by tenant and outcome, once per delivery, batched members each", async () => {
      const types = { eventTypes: ["ledger.latency"] };
      const ok = await env.createConfig({ endpoint: `${receiver.url}/ok`, ...types });
      const gone = await env.createConfig({ endpoint: `${receiver.url}/gone`, eventTypes: ["ledger.gone"] });
      const event = (type: string, over: Record<string, unknown> = {}) =>
        env.event({ type, ...over }) as { idempotency_key: string };
      const first = event("LATENCY");
      const started = Date.now();
      expect((await env.api.call("POST", "/events", first)).status).to.equal(202);
      expect((await env.result(ok.id, first.idempotency_key)).status).to.equal("success");
      const failed = event("GONE");
      expect((await env.api.call("POST", "/events", failed)).status).to.equal(202);
      expect((await env.result(gone.id, failed.idempotency_key)).status).to.equal("failed");

      // A delivery retried once is one observation, at its success.
      const flaky = await env.createConfig({
        endpoint: `${receiver.url}/flaky`,
        eventTypes: ["ledger.flaky"],
      });
      const retried = event("FLAKY");
      expect((await env.api.call("POST", "/events", retried)).status).to.equal(202);
      const result = await env.result(flaky.id, retried.idempotency_key);
      expect([result.status, result.attempts]).to.deep.equal(["success", 2]);

      let text = await scrape(env.api.url);
      expect(latency(text, NIL_TENANT, "delivered")).to.equal(2);
      expect(latency(text, NIL_TENANT, "failed")).to.equal(1);
      const sum = one(text, "webhooks_delivery_latency_seconds_sum", {
        tenant: NIL_TENANT,
        outcome: "delivered",
      });
      expect(sum)
        .to.be.greaterThan(0)
        .and.at.most((Date.now() - started) / 1000);
      expect(
        one(text, "webhooks_delivery_latency_seconds_bucket", { outcome: "delivered", le: "+Inf" }),
      ).to.equal(2);

      // A batch's members are each a delivery; a second tenant is past the cap of one.
      await env.createConfig({
        endpoint: `${receiver.url}/ok`,
        eventTypes: ["ledger.batched"],
        batch: { maxEvents: 3, maxWaitMs: 300 },
      });
      for (let i = 0; i < 3; i++)
        expect((await env.api.call("POST", "/events", event("BATCHED"))).status).to.equal(202);
      const uid = `acme-${randomBytes(3).toString("hex")}`;
      const tenant = (await env.api.call("POST", "/tenants", { uid })).body.data;
      await env.createConfig({ endpoint: `${receiver.url}/ok`, ...types, tenantId: tenant.id });
      expect((await env.api.call("POST", "/events", event("LATENCY", { tenant: uid }))).status).to.equal(202);
      await until(
        "the batch and the other tenant's delivery observed",
        async () => {
          text = await scrape(env.api.url);
          return latency(text, NIL_TENANT, "delivered") === 5 && latency(text, "other", "delivered") === 1;
        },
        60_000,
        200,
      );
      expect(samples(text, "webhooks_delivery_latency_seconds_count", { tenant: tenant.id })).to.deep.equal(
        [],
      );
      expect(latency(text, NIL_TENANT, "failed")).to.equal(1);
    });

    it("serves the SDK's worker metrics and the product's in one scrape, no family twice", async () => {
      const text = await scrape(env.api.url);
      const q = env.api.taskQueue;
      const sends = { task_queue: `${q}-sends`, worker_type: "ActivityWorker" };
      expect(one(text, "temporal_worker_task_slots_available", sends)).to.equal(100);
      expect(one(text, "temporal_worker_task_slots_used", sends)).to.equal(0);
      // Local sends are slots of the workflow worker; its workflow-task slots come from our own
      // supplier (workers/workflow-task-slots.ts): the SDK counts those used, not those available.
      const local = { task_queue: q, worker_type: "LocalActivityWorker" };
      expect(one(text, "temporal_worker_task_slots_available", local)).to.equal(100);
      expect(
        one(text, "temporal_worker_task_slots_used", { task_queue: q, worker_type: "WorkflowWorker" }),
      ).to.be.at.least(0);
      expect(
        one(text, "temporal_workflow_task_schedule_to_start_latency_seconds_count", { task_queue: q }),
      ).to.be.greaterThan(0);
      expect(one(text, "temporal_sticky_cache_size", { task_queue: q })).to.be.at.least(0);
      expect(
        one(text, "webhooks_delivery_attempts_total", { status: "success", status_class: "2xx" }),
      ).to.be.greaterThan(0);
      expect(one(text, "webhooks_task_queue_stats_sampler")).to.equal(1);
      expect(
        one(text, "webhooks_task_queue_backlog_tasks", { task_queue: `${q}-sends`, task_type: "activity" }),
      ).to.equal(0);

      const families = [...text.matchAll(/^# TYPE (\S+) /gm)].map((m) => m[1]);
      expect(families.length).to.be.greaterThan(40);
      expect(
        families.filter((f, i) => families.indexOf(f) !== i),
        "families declared twice",
      ).to.deep.equal([]);
      const names = new Set(
        text
          .split("\n")
          .filter((l) => l && !l.startsWith("#"))
          .map((l) => /^[\w:]+/.exec(l)?.[0]),
      );
      expect(
        [...names].filter((n) => !/^(webhooks|temporal)_/.test(n ?? "")),
        "names of neither",
      ).to.deep.equal([]);
    });
  });

  describe("task queue backlog", () => {
    const started: WebhooksUnderTest[] = [];
    after(async () => {
      for (const p of started) await p.stop();
    });
    /** `serve --worker` polling the sends and maintenance queues only: delivery workflows wait in their queue. */
    const noWorkflowWorker = async (over: { db?: WebhooksUnderTest["db"]; taskQueue?: string } = {}) => {
      const p = await startWebhooks({
        worker: true,
        ...(over.db ? { db: over.db } : {}),
        args: [
          "--task-queues",
          "sends,maintenance",
          "--no-consume",
          "--audit-topic",
          "",
          "--task-queue-stats-interval",
          "1s",
          // The second process also goes without the SDK's metrics.
          ...(over.taskQueue ? ["--task-queue", over.taskQueue, "--temporal-sdk-metrics", "false"] : []),
        ],
      });
      started.unshift(p);
      return p;
    };

    it("shows the backlog of a queue no worker polls from the one process reading it; another (without the SDK's metrics) takes over when it stops", async () => {
      const first = await noWorkflowWorker();
      const second = await noWorkflowWorker({ db: first.db, taskQueue: first.taskQueue });
      const waiting = { task_queue: first.taskQueue, task_type: "workflow" };
      const config = await first.call("POST", "/configs", {
        endpoint: "https://backlog.test/hook",
        eventTypes: ["a.b"],
      });
      expect(config.status, config.text).to.equal(200);
      for (let i = 0; i < 3; i++) {
        const event = {
          idempotency_key: `b-${i}`,
          date: new Date().toISOString(),
          app: "a",
          type: "b",
          payload: {},
        };
        expect((await first.call("POST", "/events", event)).status).to.equal(202);
      }

      let text = "";
      await until(
        "the first process's backlog gauge at 3",
        async () => {
          text = await scrape(first.url);
          return one(text, "webhooks_task_queue_backlog_tasks", waiting) === 3;
        },
        30_000,
        250,
      );
      expect(one(text, "webhooks_task_queue_stats_sampler")).to.equal(1);
      expect(
        one(text, "webhooks_task_queue_backlog_tasks", {
          task_type: "activity",
          task_queue: `${first.taskQueue}-sends`,
        }),
      ).to.equal(0);
      const other = await scrape(second.url);
      expect(other).to.not.match(/^temporal_/m);
      expect(text).to.match(/^temporal_worker_task_slots_available\{/m);
      expect(one(other, "webhooks_task_queue_stats_sampler")).to.equal(0);
      expect(samples(other, "webhooks_task_queue_backlog_tasks")).to.deep.equal([]);

      await first.process.stop();
      await until(
        "the second process's backlog gauge at 3",
        async () => {
          text = await scrape(second.url);
          return one(text, "webhooks_task_queue_backlog_tasks", waiting) === 3;
        },
        30_000,
        250,
      );
      expect(one(text, "webhooks_task_queue_stats_sampler")).to.equal(1);
      expect(one(text, "webhooks_task_queue_backlog_age_seconds", waiting)).to.be.greaterThan(0);
      expect(second.process.output).to.include("reading the task queues' stats for /metrics");

      const temporal = new Client({
        connection: await Connection.connect({ address: first.temporalAddress }),
      });
      for await (const w of temporal.workflow.list({ query: `TaskQueue = "${first.taskQueue}"` }))
        await temporal.workflow
          .getHandle(w.workflowId)
          .terminate("test over")
          .catch(() => undefined);
      await temporal.connection.close();
    });

    it("reads the same stats in the ENHANCED mode of older servers, and goes quiet where a server reports none", async () => {
      const address = (started[0] ?? (await noWorkflowWorker())).temporalAddress;
      const connection = await Connection.connect({ address });
      try {
        const client = new Client({ connection });
        const queue: ServiceQueue = { name: `stats-${randomBytes(4).toString("hex")}`, type: "workflow" };
        for (let i = 0; i < 2; i++)
          await client.workflow.start("nothingRunsThis", {
            taskQueue: queue.name,
            workflowId: `${queue.name}-${i}`,
          });
        const describe: DescribeTaskQueue = (r) => connection.workflowService.describeTaskQueue(r);
        for (const mode of ["default", "enhanced"] as const)
          await until(
            `two tasks in ${mode} mode`,
            async () => (await readQueueStats(describe, "default", queue, mode))?.backlog === 2,
            20_000,
            250,
          );

        // A server before 1.25 answers without stats in either mode.
        const lines: string[] = [];
        const logger = pino({ level: "info" }, { write: (l: string) => void lines.push(l) });
        const statsless: DescribeTaskQueue = async (r) =>
          Object.assign(await describe(r), { stats: null, versionsInfo: {} });
        const sampler = new Sampler(statsless, "default", [queue], logger);
        for (let i = 0; i < 3; i++) await sampler.tick();
        expect(lines.filter((l) => l.includes("reports no task queue stats"))).to.have.length(1);
        expect(
          (await registry.getSingleMetric("webhooks_task_queue_backlog_tasks")?.get())?.values,
        ).to.deep.equal([]);

        // The same sampler on the real answers sets the gauge.
        await new Sampler(describe, "default", [queue], logger).tick();
        const values = (await registry.getSingleMetric("webhooks_task_queue_backlog_tasks")?.get())?.values;
        expect(values?.map((v) => [v.labels.task_queue, v.value])).to.deep.equal([[queue.name, 2]]);
        for (let i = 0; i < 2; i++)
          await client.workflow.getHandle(`${queue.name}-${i}`).terminate("test over");
      } finally {
        await connection.close();
      }
    });
  });
});
