// tags: @long (over 45 s: among the first files the parallel suite starts)
import { mkdtemp } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { expect } from "chai";
import { type DevServer, startDevServer } from "../../common/temporal-dev-server.js";
import { orderedWorkflowId } from "../../core/ordering.js";
import { searchAttributeCliArgs } from "../../workflows/search-attributes.js";
import { DeliveryEnv } from "../support/delivery-env.js";
import { freePort } from "../support/ports.js";
import { Receiver } from "../support/receiver.js";
import { until } from "../support/until.js";

const EVENTS = 600;
/** Far below Temporal's own 10 000 signals and 2 MB payloads: a backlog of EVENTS crosses both. */
const SIGNALS_PER_RUN = 50;
const BLOB_BYTES = 128 * 1024;

/**
 * One key's backlog while its receiver is down, on a Temporal server whose limits are
 * lowered (50 signals per run, 128 KiB per payload): the backlog is rows, so neither limit
 * is reached however long the key waits, and once the receiver is back every event goes
 * once, in order, with no dead letter. (A key workflow that holds its queue in its state
 * and is signalled per event crosses both: its signals are refused past the 50th and its
 * continue-as-new input outgrows the payload limit.)
 */
describe("ordered delivery: a long backlog on one key stays within Temporal's limits", function () {
  this.timeout(420_000);
  const env = new DeliveryEnv();
  let server: DevServer;
  let receiver: Receiver;

  before(async () => {
    server = await startDevServer({
      searchAttributes: searchAttributeCliArgs(),
      port: await freePort(),
      headless: true,
      logFile: path.join(await mkdtemp(path.join(tmpdir(), "etp-ordered-backlog-")), "server.log"),
      dynamicConfig: {
        "history.maximumSignalsPerExecution": String(SIGNALS_PER_RUN),
        "limit.blobSize.error": String(BLOB_BYTES),
        "limit.blobSize.warn": String(BLOB_BYTES / 2),
      },
    });
    await env.start(
      ["--min-backoff-delay", "1s", "--max-backoff-delay", "1s", "--max-attempts", "1000"],
      server.address,
    );
    receiver = await new Receiver().start();
  });
  after(async () => {
    await receiver?.stop();
    await env.stop();
    await server?.stop();
  });

  it(`delivers ${EVENTS} events of one key once each, in order, after the receiver came back`, async () => {
    const config = await env.createConfig({
      endpoint: receiver.url,
      eventTypes: ["ledger.ordered_backlog"],
      ordering: { enabled: true },
    });
    let up = false;
    const succeeded: number[] = [];
    receiver.respond = (r, res) => {
      if (!up) return void res.writeHead(503).end();
      succeeded.push((JSON.parse(r.body).payload as { seq: number }).seq);
      res.writeHead(200).end();
    };
    for (let seq = 1; seq <= EVENTS; seq++)
      await env.publish(
        env.event({
          type: "ordered_backlog",
          idempotency_key: `backlog-${seq}`,
          ordering_key: "one",
          payload: { seq },
        }),
      );
    const backlog = async () =>
      (
        await env.query<{ n: number }>(
          "SELECT count(*)::int AS n FROM ordered_backlog WHERE config_id = $1",
          [config.id],
        )
      )[0]!.n;
    await until("the whole backlog accepted", async () => (await backlog()) >= EVENTS - 1, 120_000, 200);
    // The head has been retried meanwhile; the receiver comes back.
    expect(receiver.requests.length).to.be.greaterThan(0);
    up = true;
    await until("every event", () => succeeded.length >= EVENTS, 300_000, 200);
    expect(succeeded).to.deep.equal(Array.from({ length: EVENTS }, (_, i) => i + 1));
    await until("the backlog empty", async () => (await backlog()) === 0, 120_000, 200);

    const deadLetters = await env.api.call("GET", "/dead-letters");
    expect(deadLetters.status, deadLetters.text).to.equal(200);
    expect(deadLetters.body.cursor.data).to.deep.equal([]);

    // Every run of the key's sequencer: a small history and a small input, whatever the backlog.
    const id = orderedWorkflowId(config.id, "one");
    let runs = 0;
    for await (const run of env.temporal.workflow.list({ query: `WorkflowId = "${id}"` })) {
      runs++;
      expect(run.status.name, `run ${run.runId}`).to.be.oneOf(["COMPLETED", "CONTINUED_AS_NEW", "RUNNING"]);
      const history = await env.temporal.workflow.getHandle(id, run.runId).fetchHistory();
      const input = history.events?.[0]?.workflowExecutionStartedEventAttributes?.input?.payloads ?? [];
      const inputBytes = input.reduce((n, p) => n + (p.data?.length ?? 0), 0);
      expect(inputBytes, "a run's input").to.be.below(4 * 1024);
      const signals = (history.events ?? []).filter((e) => e.workflowExecutionSignaledEventAttributes).length;
      expect(signals, "signals in a run").to.be.below(SIGNALS_PER_RUN);
      // Short runs keep a takeover's replay short (MAX_RUN_EVENTS = 50 in
      // workflows/key-sequencer.ts, plus what one step past the check adds).
      expect(history.events?.length, "events in a run").to.be.at.most(64);
    }
    expect(runs).to.be.greaterThan(0);
  });
});
