// tags: @long (over 45 s: among the first files the parallel suite starts)
import { Client, Connection } from "@temporalio/client";
import { defaultPayloadConverter } from "@temporalio/common";
import proto from "@temporalio/proto";
import { expect } from "chai";
import pg from "pg";
import { CpuHog } from "../support/cpu-hog.js";
import type { Received } from "../support/receiver.js";
import { KilledWorkerStack, orderedEvents } from "../support/worker-process.js";

const { TIMEOUT_TYPE_START_TO_CLOSE: START_TO_CLOSE } = proto.temporal.api.enums.v1.TimeoutType;
const KEYS = 50;
const PER_KEY = 40;

/**
 * 2 000 events over 50 ordering keys published at full speed on NATS to an ordered config,
 * while the worker that consumes them and runs their workflows is killed -9 twice, beside
 * two busy loops: each key's events reach the receiver in stream order, none lost, none
 * sent again once it succeeded, and no workflow task of a worker still alive timed out. (On
 * a loaded machine the worker that takes the keys over replays them slowly: with the
 * default 10 s workflow-task timeout its tasks timed out again and again, each timeout
 * replayed them anew, and deliveries fell from 35/s to 5/s; with runs of up to 150 events the tasks of a loaded CI
 * machine outlasted even 30 s, hence runs of 50: workflows/key-sequencer.ts.)
 */
describe("ordered delivery survives a worker killed -9 twice", function () {
  this.timeout(420_000);
  const stack = new KilledWorkerStack("ordered");
  const hog = new CpuHog();

  before(() => stack.start());
  after(async () => {
    await hog.stop();
    await stack.stop();
  });

  const eventOf = (r: Received) => (JSON.parse(r.body) as { payload: { key: number; seq: number } }).payload;

  const waitForRequests = async (count: number, timeoutMs: number) => {
    const end = Date.now() + timeoutMs;
    while (stack.receiver.requests.length < count) {
      if (Date.now() > end)
        throw new Error(`expected ${count} requests, got ${stack.receiver.requests.length}`);
      await new Promise((r) => setTimeout(r, 50));
    }
  };

  /** What is missing and what its workflows say (for the failure message). */
  const missing = async (configId: string) => {
    const temporal = new Client({
      connection: await Connection.connect({ address: stack.api.temporalAddress }),
    });
    const lines: string[] = [];
    try {
      for (let key = 0; key < KEYS; key++) {
        const got = new Set(
          stack.receiver.requests
            .map(eventOf)
            .filter((e) => e.key === key)
            .map((e) => e.seq),
        );
        const lost = Array.from({ length: PER_KEY }, (_, i) => i + 1).filter((s) => !got.has(s));
        if (lost.length === 0) continue;
        const state = await temporal.workflow
          .getHandle(`ordered:${configId}:key-${key}`)
          .query("ordered-state")
          .catch((err: Error) => err.message);
        const handle = temporal.workflow.getHandle(`delivery:${configId}:ok-${key}-${lost[0]}`);
        const child = await handle
          .result()
          .then((r) => JSON.stringify(r))
          .catch((err: Error & { cause?: Error & { cause?: Error } }) =>
            [err.message, err.cause?.message, err.cause?.cause?.message].join(" / "),
          );
        const events = await handle
          .fetchHistory()
          .then((h) => (h.events ?? []).map((e) => e.eventType).join(","))
          .catch(() => "");
        lines.push(
          `key ${key}: missing ${lost.join(",")}; queue ${JSON.stringify(state)}; first missing ${child}; history ${events}`,
        );
      }
    } finally {
      await temporal.connection.close();
    }
    return lines.join("\n");
  };

  /**
   * The sequencers' workflow tasks that timed out while a worker still alive ran them (the
   * killed workers' tasks time out by design): every run of every key, from its history.
   */
  const timedOutOnLiveWorkers = async (configId: string, killedPids: number[]) => {
    const temporal = new Client({
      connection: await Connection.connect({ address: stack.api.temporalAddress }),
    });
    const found: string[] = [];
    let slowestMs = 0;
    let runCount = 0;
    try {
      const runs = temporal.workflow.list({ query: `WorkflowId STARTS_WITH "ordered:${configId}:"` });
      for await (const run of runs) {
        runCount++;
        const history = await temporal.workflow.getHandle(run.workflowId, run.runId).fetchHistory();
        let startedBy = "";
        let startedAt = 0;
        for (const e of history.events ?? []) {
          const at = Number(e.eventTime?.seconds ?? 0) * 1000 + (e.eventTime?.nanos ?? 0) / 1e6;
          if (e.workflowTaskStartedEventAttributes) {
            startedBy = e.workflowTaskStartedEventAttributes.identity ?? "";
            startedAt = at;
          }
          if (e.workflowTaskCompletedEventAttributes) slowestMs = Math.max(slowestMs, at - startedAt);
          const timedOut = e.workflowTaskTimedOutEventAttributes;
          const onLive = !killedPids.includes(Number(startedBy.split("@")[0]));
          if (timedOut?.timeoutType === START_TO_CLOSE && onLive)
            found.push(`${run.workflowId} event ${e.eventId} (task run by ${startedBy})`);
        }
      }
    } finally {
      await temporal.connection.close();
    }
    console.log(
      `      ${runCount} sequencer runs; slowest completed workflow task ${Math.round(slowestMs)} ms`,
    );
    return found;
  };

  /** What the key's workflow did and what the database holds of its deliveries (for an order failure). */
  const keyStory = async (configId: string, key: number) => {
    const temporal = new Client({
      connection: await Connection.connect({ address: stack.api.temporalAddress }),
    });
    const db = new pg.Client({ connectionString: stack.api.db.url });
    await db.connect();
    const lines: string[] = [];
    try {
      const seqOf = (id: unknown) => String(id).replace(/^.*-(\d+)$/, "$1");
      const history = await temporal.workflow.getHandle(`ordered:${configId}:key-${key}`).fetchHistory();
      for (const e of history.events ?? []) {
        const at = new Date(Number(e.eventTime?.seconds ?? 0) * 1000 + (e.eventTime?.nanos ?? 0) / 1e6);
        let what = String(e.eventType);
        const signal = e.workflowExecutionSignaledEventAttributes;
        if (signal?.input?.payloads?.[0]) {
          const item = defaultPayloadConverter.fromPayload<{ workflowId?: string; restored?: boolean }>(
            signal.input.payloads[0],
          );
          what += ` ${signal.signalName} ${seqOf(item?.workflowId)}${item?.restored ? " restored" : ""}`;
        }
        if (e.workflowTaskCompletedEventAttributes)
          what += ` by ${e.workflowTaskCompletedEventAttributes.identity}`;
        if (e.workflowTaskFailedEventAttributes) what += ` ${e.workflowTaskFailedEventAttributes.cause}`;
        lines.push(`  ${at.toISOString()} #${e.eventId} ${what}`);
      }
      const { rows } = await db.query(
        `SELECT a.workflow_id, a.retry_attempt AS attempt, a.status, a.created_at FROM attempts a
          WHERE a.config_id = $1 AND a.workflow_id LIKE $2 ORDER BY a.created_at`,
        [configId, `%ok-${key}-%`],
      );
      for (const r of rows)
        lines.push(
          `  attempt ${seqOf(r.workflow_id)} #${r.attempt} ${r.status} ${r.created_at.toISOString()}`,
        );
      const unsent = await db.query(
        `SELECT workflow_id, state, accepted_at, updated_at FROM unsent_deliveries
          WHERE config_id = $1 AND workflow_id LIKE $2 ORDER BY accepted_at`,
        [configId, `%ok-${key}-%`],
      );
      for (const r of unsent.rows)
        lines.push(
          `  unsent ${seqOf(r.workflow_id)} ${r.state} accepted ${r.accepted_at.toISOString()} updated ${r.updated_at.toISOString()}`,
        );
    } catch (err) {
      lines.push(`  (${(err as Error).message})`);
    } finally {
      await db.end();
      await temporal.connection.close();
    }
    return lines.join("\n");
  };

  it("delivers every key in order with no gap and no repeat of a succeeded event", async () => {
    const configId = await stack.orderedConfig("ordered_kill");
    hog.start(2);
    // Published at full speed: every publish is in flight at once, in stream order.
    await stack.publishAll(orderedEvents("ordered_kill", KEYS, PER_KEY, "ok"));

    const killedPids: number[] = [];
    for (const at of [300, 1000]) {
      await waitForRequests(at, 120_000);
      killedPids.push(stack.worker!.child.pid!);
      await stack.restartWorker();
    }

    // Every event of every key succeeded once, whatever else came.
    const seqs = () => {
      const byKey = new Map<number, number[]>();
      for (const r of stack.receiver.requests) {
        const e = eventOf(r);
        byKey.set(e.key, [...(byKey.get(e.key) ?? []), e.seq]);
      }
      return byKey;
    };
    // Generous: beside the busy loops and a loaded suite the last keys may lag (a stalled
    // takeover shows in the timed-out tasks below, whatever the time).
    const end = Date.now() + 180_000;
    while (![...seqs().values()].every((s) => new Set(s).size === PER_KEY) || seqs().size < KEYS) {
      if (Date.now() > end) throw new Error(`not all delivered: ${await missing(configId)}`);
      await new Promise((r) => setTimeout(r, 200));
    }

    let resent = 0;
    for (const [key, received] of seqs()) {
      // The only repeat allowed is of the POST in flight when a worker died (its answer was
      // never recorded): the same event again, before any later one. Never an earlier event.
      const collapsed = received.filter((s, i) => i === 0 || s !== received[i - 1]);
      resent += received.length - collapsed.length;
      const inOrder = Array.from({ length: PER_KEY }, (_, i) => i + 1);
      if (JSON.stringify(collapsed) !== JSON.stringify(inOrder))
        console.log(
          `key ${key} out of order; its workflow and rows:\n${await keyStory(configId, key)}\n` +
            `the workers said:\n${stack.workerLines(new RegExp(`unacknowledged|handling failed|"key":"ok-${key}-`)).join("\n")}`,
        );
      expect(collapsed, `key ${key}`).to.deep.equal(inOrder);
    }
    // At most the sends in flight at the two kills.
    expect(resent).to.be.at.most(2 * KEYS);
    expect(
      await timedOutOnLiveWorkers(configId, killedPids),
      "tasks timed out on a live worker",
    ).to.deep.equal([]);
  });
});
