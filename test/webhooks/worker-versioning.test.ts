// tags: @temporal-server-only (run on the production Temporal server, npm run test:temporal-server; in the main suite beside its load, a delivery started right after the rollback still went to build 2 once)
import { randomBytes } from "node:crypto";
import { Client, Connection } from "@temporalio/client";
import proto from "@temporalio/proto";
import { expect } from "chai";
import pg from "pg";
import { orderedWorkflowId } from "../../core/ordering.js";
import { workflowBuildId } from "../../workers/workflow-bundle.js";
import type { ServiceProcess } from "../support/process.js";
import { Receiver } from "../support/receiver.js";
import { waitForWorkflow } from "../support/temporal.js";
import { type CopiedBuild, copyBuildWith, rollout } from "../support/versioned-builds.js";
import { FAST_RETRIES, startWebhooks, type WebhooksUnderTest } from "../support/webhooks-server.js";
import { startWorkerProcess, testStream } from "../support/worker-process.js";

const { VERSIONING_BEHAVIOR_PINNED: PINNED, VERSIONING_BEHAVIOR_AUTO_UPGRADE: AUTO_UPGRADE } =
  proto.temporal.api.enums.v1.VersioningBehavior;
const { EVENT_TYPE_WORKFLOW_TASK_COMPLETED, EVENT_TYPE_ACTIVITY_TASK_STARTED } =
  proto.temporal.api.enums.v1.EventType;

/** Build 2's visible change, in its compiled delivery workflow: the reason a success is reported with (result and current details). */
const SUCCESS = [
  // biome-ignore lint/suspicious/noTemplateCurlyInString: the compiled code's text, not a template
  'finish("success", `HTTP ${attempt.statusCode}`)',
  // biome-ignore lint/suspicious/noTemplateCurlyInString: the same, changed
  'finish("success", `HTTP ${attempt.statusCode} (build 2)`)',
] as const;
const reasonOf = (build: 1 | 2) => (build === 1 ? "HTTP 200" : "HTTP 200 (build 2)");

/**
 * Worker Versioning with two builds' workers running at once (workers/worker-versioning.ts,
 * scripts/rollout.sh): build 1 is this tree, build 2 a copy whose delivery workflow reports
 * its success differently, so a result says which code ran it; the server's versioning info
 * and the history's workflow tasks say which version did. One API process starts every
 * delivery (POST /events); each build has one `webhooks worker`, polling the three queues.
 */
describe("Worker Versioning: two builds of the workers at once", function () {
  this.timeout(300_000);
  const deployment = `webhooks-test-${randomBytes(4).toString("hex")}`;
  const feed = { ...testStream(), consumer: "unused" };
  let api: WebhooksUnderTest;
  let receiver: Receiver;
  let client: Client;
  let build2: CopiedBuild;
  const builds: Record<1 | 2, string> = { 1: "", 2: "" };
  /** Each build's worker process; 0 is the unversioned one of before versioning. */
  const workers: Partial<Record<0 | 1 | 2, ServiceProcess>> = {};
  /** Events whose receiver answers 503 for now: their deliveries stay running, retrying. */
  const held = new Set<string>();
  /** 200 answers per idempotency key. */
  const delivered = new Map<string, number>();
  /** Every delivery started, by idempotency key. */
  const started = new Map<string, string>();
  let orderedConfig = "";
  const step = (command: string, ...args: string[]) =>
    rollout(api.temporalAddress, deployment, command, ...args);

  const startWorker = async (build: 1 | 2) => {
    const executable = build === 1 ? "webhooks" : build2.webhooks;
    const args = ["--no-consume", "--worker-deployment-name", deployment];
    workers[build] = await startWorkerProcess(api, feed, args, executable);
    // The build id is each tree's own bundle hash, by default.
    await workers[build]!.waitForOutput(`"buildId":"${builds[build]}"`);
    await step("wait", "--build-id", builds[build], "--task-queue", api.taskQueue);
  };

  before(async () => {
    build2 = await copyBuildWith("workflows/delivery.js", ...SUCCESS);
    builds[1] = await workflowBuildId();
    builds[2] = await workflowBuildId(build2.dist);
    receiver = await new Receiver().start();
    receiver.respond = (req, res) => {
      const key = JSON.parse(req.body).idempotency_key as string;
      if (held.has(key)) return void res.writeHead(503).end("not yet");
      delivered.set(key, (delivered.get(key) ?? 0) + 1);
      res.writeHead(200).end("ok");
    };
    api = await startWebhooks({
      // A delivery held past the default 15 attempts would fail.
      args: ["--audit-topic", "", ...FAST_RETRIES, "--max-attempts", "500"],
    });
    client = new Client({ connection: await Connection.connect({ address: api.temporalAddress }) });
    await createConfig({});
    orderedConfig = await createConfig({ eventTypes: ["ledger.ordered"], ordering: { enabled: true } });
  });
  after(async () => {
    await Promise.all(Object.values(workers).map((w) => w.stop()));
    await receiver?.stop();
    await api?.stop();
    await client?.connection.close();
    await build2?.remove();
  });

  async function createConfig(extra: Record<string, unknown>): Promise<string> {
    const r = await api.call("POST", "/configs", {
      endpoint: receiver.url,
      eventTypes: ["ledger.committed_transactions"],
      ...extra,
    });
    if (r.status !== 200) throw new Error(`create config: ${r.text}`);
    return r.body.data.id as string;
  }

  /** Starts `count` deliveries through POST /events, held when asked; their workflow ids. */
  async function deliver(prefix: string, count: number, opts: { hold?: boolean; ordered?: string } = {}) {
    const keys = Array.from({ length: count }, (_, i) => `${prefix}-${i}-${randomBytes(3).toString("hex")}`);
    if (opts.hold) for (const k of keys) held.add(k);
    return Promise.all(
      keys.map(async (key) => {
        const r = await api.call("POST", "/events", {
          idempotency_key: key,
          date: new Date().toISOString(),
          app: "ledger",
          version: "v2",
          type: opts.ordered ? "ORDERED" : "COMMITTED_TRANSACTIONS",
          ...(opts.ordered ? { ordering_key: opts.ordered } : {}),
          payload: { key },
        });
        expect(r.status, r.text).to.equal(202);
        const id = r.body.data.deliveries[0].workflowID as string;
        started.set(key, id);
        return id;
      }),
    );
  }

  /** The version a workflow runs on, as the server says, and its behaviour (once its first workflow task completed). */
  async function versionOf(workflowId: string, expectedBuildId?: string) {
    const deadline = Date.now() + 30_000;
    for (;;) {
      const d = await client.workflow.getHandle(workflowId).describe();
      const info = d.raw.workflowExecutionInfo?.versioningInfo;
      const version = info?.deploymentVersion;
      if ((version && (!expectedBuildId || version.buildId === expectedBuildId)) || Date.now() > deadline)
        return { buildId: version?.buildId ?? "", behavior: info?.behavior };
      await new Promise((r) => setTimeout(r, 200));
    }
  }

  /** Waits for each delivery's end: the build whose code ran it (by its result), checked against the server's versioning info. */
  async function buildsThatRan(ids: string[]): Promise<(1 | 2)[]> {
    return Promise.all(
      ids.map(async (id) => {
        await waitForWorkflow(client.workflow.getHandle(id), 60_000);
        const result = await client.workflow.getHandle(id).result();
        expect(result.status, id).to.equal("success");
        const build = result.reason === reasonOf(2) ? 2 : 1;
        expect(result.reason, id).to.equal(reasonOf(build));
        expect(await versionOf(id), id).to.deep.equal({ buildId: builds[build], behavior: PINNED });
        return build;
      }),
    );
  }

  /** Who completed each workflow task and started each activity of a workflow: build ids and worker pids. */
  async function tasksOf(workflowId: string) {
    const history = await client.workflow.getHandle(workflowId).fetchHistory();
    const events = history.events ?? [];
    const completed = events.filter((e) => e.eventType === EVENT_TYPE_WORKFLOW_TASK_COMPLETED);
    const activities = events.filter((e) => e.eventType === EVENT_TYPE_ACTIVITY_TASK_STARTED);
    return {
      buildIds: completed.map((e) => e.workflowTaskCompletedEventAttributes?.deploymentVersion?.buildId),
      pids: [...completed, ...activities].map((e) =>
        Number(
          (
            e.workflowTaskCompletedEventAttributes?.identity ?? e.activityTaskStartedEventAttributes?.identity
          )?.split("@")[0],
        ),
      ),
    };
  }

  const keysOf = (ids: string[]) => [...started].filter(([, id]) => ids.includes(id)).map(([key]) => key);
  const waitUntilTried = async (ids: string[]) => {
    const keys = keysOf(ids);
    for (;;) {
      const tried = new Set(receiver.requests.map((r) => JSON.parse(r.body).idempotency_key));
      if (keys.every((k) => tried.has(k))) return;
      await new Promise((r) => setTimeout(r, 100));
    }
  };
  const release = (ids: string[]) => {
    for (const key of keysOf(ids)) held.delete(key);
  };

  let heldOn1: string[] = [];
  let orderedHeads: string[] = [];
  let heldOn2: string[] = [];

  it("a delivery started before versioning moves to build 1 once that is current", async () => {
    workers[0] = await startWorkerProcess(api, feed, ["--no-consume"]);
    const unversioned = await deliver("unversioned", 1, { hold: true });
    await waitUntilTried(unversioned);
    const before = await client.workflow.getHandle(unversioned[0]!).describe();
    expect(before.raw.workflowExecutionInfo?.versioningInfo?.deploymentVersion ?? null).to.equal(null);
    await startWorker(1);
    await step("promote", "--build-id", builds[1]);
    await workers[0].stop();
    release(unversioned);
    // Its next task ran on build 1, which pinned it (deliveries are Pinned in the versioned bundle).
    expect(await buildsThatRan(unversioned)).to.deep.equal([1]);
    const { buildIds } = await tasksOf(unversioned[0]!);
    expect(buildIds.at(0)).to.equal(undefined);
    expect(buildIds.at(-1)).to.equal(builds[1]);
  });

  it("build 1 current: its deliveries run pinned to it", async () => {
    heldOn1 = await deliver("held-1", 5, { hold: true });
    // The ordered key's first head is held too: its sequencer waits on it across the switch (the
    // head's first send is the sequencer's own; its retries a child delivery workflow's).
    orderedHeads = [
      ...(await deliver("ordered-1", 1, { hold: true, ordered: "k" })),
      ...(await deliver("ordered-2", 1, { ordered: "k" })),
    ];
    expect(await buildsThatRan(await deliver("plain-1", 3))).to.deep.equal([1, 1, 1]);
    await waitUntilTried([...heldOn1, orderedHeads[0]!]);
    for (const id of heldOn1)
      expect(await versionOf(id)).to.deep.equal({ buildId: builds[1], behavior: PINNED });
    expect(await versionOf(orderedWorkflowId(orderedConfig, "k"))).to.deep.equal({
      buildId: builds[1],
      behavior: AUTO_UPGRADE,
    });
  });

  it("a 50 % ramp of build 2 splits new deliveries between the builds; ending it sends them all to build 1", async () => {
    await startWorker(2);
    await step("ramp", "--build-id", builds[2], "--percent", "50");
    const ran = await buildsThatRan(await deliver("ramp", 40));
    const on2 = ran.filter((b) => b === 2).length;
    console.log(`      ramped 50 %: ${on2} of 40 deliveries on build 2`);
    // By workflow id hash: 20 expected, and fewer than 8 or more than 32 has odds under 1 in 1 000.
    expect(on2).to.be.within(8, 32);
    // Ending the ramp: every new delivery goes to the current build again.
    await step("rollback");
    expect(await step("status")).to.match(new RegExp(`current ${builds[1]}\n`));
    expect(await buildsThatRan(await deliver("unramped", 5))).to.deep.equal([1, 1, 1, 1, 1]);
  });

  it("build 2 current: new deliveries run on it; those started on build 1 finish there", async () => {
    await step("promote", "--build-id", builds[2]);
    // Build 1 drains: its held deliveries and the ordered head (Pinned), and the sequencer
    // waiting on that head (AutoUpgrade: it moves at its next task). Visibility may lag a little.
    const draining = new RegExp(
      `current ${builds[2]}\n[^]*${builds[1]}  drainage draining, running: 6 pinned, 1 auto-upgrade`,
    );
    let status = "";
    for (let i = 0; i < 20 && !draining.test(status); i++) {
      if (i) await new Promise((r) => setTimeout(r, 500));
      status = await step("status");
    }
    expect(status).to.match(draining);
    expect(await buildsThatRan(await deliver("plain-2", 5))).to.deep.equal([2, 2, 2, 2, 2]);
    heldOn2 = await deliver("held-2", 3, { hold: true });
    await waitUntilTried(heldOn2);
    release([...heldOn1, orderedHeads[0]!]);
    expect(await buildsThatRan(heldOn1)).to.deep.equal([1, 1, 1, 1, 1]);
    // Every task of theirs, before and after the switch, ran in build 1's process.
    for (const id of heldOn1) {
      const tasks = await tasksOf(id);
      expect(new Set(tasks.buildIds), id).to.deep.equal(new Set([builds[1]]));
      expect(new Set(tasks.pids), id).to.deep.equal(new Set([workers[1]!.child.pid]));
    }
  });

  it("the ordered key's sequencer follows the current build; its held head stays on build 1", async () => {
    expect(await buildsThatRan(orderedHeads.slice(0, 1))).to.deep.equal([1]);
    // The second head, sent by the sequencer itself once the first ended (no child workflow when its first send succeeds).
    const [first, second] = keysOf(orderedHeads);
    while (!delivered.has(second!)) await new Promise((r) => setTimeout(r, 100));
    const order = receiver.requests.map((r) => JSON.parse(r.body).idempotency_key);
    expect(order.lastIndexOf(first)).to.be.below(order.indexOf(second));
    const sequencer = orderedWorkflowId(orderedConfig, "k");
    // Its version changes when the task that sent the second head completes, which may come
    // after the receiver got the POST (seen on a loaded CI run): waited for, up to 30 s.
    expect(await versionOf(sequencer, builds[2])).to.deep.equal({
      buildId: builds[2],
      behavior: AUTO_UPGRADE,
    });
    const { buildIds } = await tasksOf(sequencer);
    expect(buildIds.at(0)).to.equal(builds[1]);
    expect(buildIds.at(-1)).to.equal(builds[2]);
  });

  it("rollback: new deliveries go back to build 1; build 2's own finish on build 2", async () => {
    await step("rollback", "--build-id", builds[1]);
    expect(await buildsThatRan(await deliver("plain-3", 5))).to.deep.equal([1, 1, 1, 1, 1]);
    release(heldOn2);
    expect(await buildsThatRan(heldOn2)).to.deep.equal([2, 2, 2]);
  });

  it("every delivery reached the receiver once, and has one 2xx attempt row", async () => {
    expect(started.size).to.equal(1 + 5 + 2 + 3 + 40 + 5 + 5 + 3 + 5);
    for (const key of started.keys()) expect(delivered.get(key), key).to.equal(1);
    const db = new pg.Client({ connectionString: api.db.url });
    await db.connect();
    try {
      // The 2xx answer of each delivery, in one row (its earlier, claimed rows take the delivery's status too).
      const { rows } = await db.query<{ successes: number }>(
        `SELECT count(*) FILTER (WHERE status_code BETWEEN 200 AND 299)::int AS successes FROM attempts GROUP BY webhook_id`,
      );
      expect(rows.map((r) => r.successes)).to.deep.equal(Array(started.size).fill(1));
    } finally {
      await db.end();
    }
  });
});
