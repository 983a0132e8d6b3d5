// tags: @temporal-server-only (only on the production Temporal server, npm run test:temporal-server:
// signals, cancellation and reconciliation as the server carries them)
import { randomUUID } from "node:crypto";
import type { ServerResponse } from "node:http";
import { WorkflowFailedError } from "@temporalio/client";
import { expect } from "chai";
import pg from "pg";
import { DeliveryEnv } from "../support/delivery-env.js";
import { type Received, Receiver } from "../support/receiver.js";
import { waitForWorkflow } from "../support/temporal.js";

type Respond = (req: Received, res: ServerResponse, call: number) => void;

/**
 * The workflow is the one authority over a delivery and the attempts table its
 * projection: queued rows match what the workflow waits for, and API actions
 * (deactivate, delete, cancel) reach the workflow instead of writing rows.
 */
describe("delivery authority: the attempts table never disagrees with the workflow", function () {
  this.timeout(120_000);
  const env = new DeliveryEnv();
  let receiver: Receiver;
  let db: pg.Client;

  before(async () => {
    await env.start(["--retry-period", "300ms", "--reconcile-grace", "1s"]);
    receiver = await new Receiver().start();
    db = new pg.Client({ connectionString: env.api.db.url });
    await db.connect();
  });
  after(async () => {
    await db?.end();
    await receiver?.stop();
    await env.stop();
  });

  /** A config on its own receiver path answering with `respond`, and its first event published. */
  async function deliver(respond: Respond) {
    const type = `t_${Math.random().toString(36).slice(2)}`;
    const path = `/hook-${type}`;
    const config = await env.createConfig({
      endpoint: receiver.url.replace("/hook", path),
      eventTypes: [`ledger.${type}`],
    });
    const requests = () => receiver.requests.filter((r) => r.path === path);
    const previous = receiver.respond;
    receiver.respond = (req, res) => {
      if (req.path !== path) return previous(req, res);
      respond(req, res, requests().length);
    };
    const event = env.event({ type });
    await env.publish(event);
    const handle = env.temporal.workflow.getHandle(env.workflowId(config.id, event.idempotency_key));
    await waitForWorkflow(handle, 30_000);
    return { config, requests, event, handle };
  }

  const rows = async (configId: string) =>
    (
      await db.query(
        `SELECT retry_attempt, status::text AS status, error, workflow_id FROM attempts
          WHERE config_id = $1 ORDER BY retry_attempt`,
        [configId],
      )
    ).rows as { retry_attempt: number; status: string; error: string | null; workflow_id: string }[];

  async function until<T>(what: string, read: () => Promise<T>, ok: (v: T) => boolean, ms = 20_000) {
    const deadline = Date.now() + ms;
    for (;;) {
      const v = await read();
      if (ok(v)) return v;
      if (Date.now() > deadline) throw new Error(`${what}: still ${JSON.stringify(v)}`);
      await new Promise((r) => setTimeout(r, 50));
    }
  }

  const later =
    (seconds: number): Respond =>
    (_req, res) =>
      res.writeHead(503, { "retry-after": String(seconds) }).end();

  it("keeps exactly one queued row while waiting, `retrying` while sending, only terminal rows once closed", async () => {
    let inSecondSend: (() => void) | undefined;
    const secondSend = new Promise<void>((r) => {
      inSecondSend = r;
    });
    const { config, handle, requests } = await deliver((_req, res, call) => {
      if (call === 1) return res.writeHead(500).end();
      inSecondSend!();
      setTimeout(() => res.writeHead(200).end(), 1500);
    });
    const waiting = await until(
      "the first attempt",
      () => rows(config.id),
      (r) => r.length === 1,
    );
    expect(waiting.map((r) => r.status)).to.deep.equal(["to retry"]);
    expect(waiting[0]!.workflow_id).to.equal(handle.workflowId);
    await secondSend;
    const sending = await rows(config.id);
    expect(sending.map((r) => r.status)).to.deep.equal(["retrying"]);
    expect((await handle.result()).status).to.equal("success");
    const closed = await rows(config.id);
    expect(closed.map((r) => [r.retry_attempt, r.status])).to.deep.equal([
      [0, "success"],
      [1, "success"],
    ]);
    expect(requests()).to.have.length(2);
  });

  it("deactivation reaches the waiting workflow at once; reactivating sends nothing more", async () => {
    const { config, handle, requests } = await deliver(later(30));
    await until(
      "the first attempt",
      () => rows(config.id),
      (r) => r[0]?.status === "to retry",
    );
    const started = Date.now();
    expect((await env.api.call("PUT", `/configs/${config.id}/deactivate`)).status).to.equal(200);
    const result = await handle.result();
    expect(Date.now() - started, "closed long before the 30 s retry").to.be.lessThan(15_000);
    expect(result).to.include({ status: "failed", reason: "config deactivated" });
    expect((await rows(config.id)).map((r) => [r.status, r.error])).to.deep.equal([
      ["failed", "config deactivated"],
    ]);
    expect((await env.api.call("PUT", `/configs/${config.id}/activate`)).status).to.equal(200);
    const view = await env.api.call("GET", `/webhooks/${result.webhookId}`);
    expect(view.body.data).to.include({
      status: "failed",
      reason: "config deactivated",
      workflowID: handle.workflowId,
    });
    await new Promise((r) => setTimeout(r, 1000));
    expect(requests()).to.have.length(1);
  });

  it("deletion closes the waiting delivery with reason `config deleted`", async () => {
    const { config, handle } = await deliver(later(30));
    await until(
      "the first attempt",
      () => rows(config.id),
      (r) => r[0]?.status === "to retry",
    );
    expect((await env.api.call("DELETE", `/configs/${config.id}`)).status).to.equal(200);
    expect(await handle.result()).to.include({ status: "failed", reason: "config deleted" });
    expect((await rows(config.id)).map((r) => r.status)).to.deep.equal(["failed"]);
  });

  it("honours the claim: a row closed behind the workflow's back is never sent again, config active or not", async () => {
    const { config, handle, requests } = await deliver(later(2));
    await until(
      "the first attempt",
      () => rows(config.id),
      (r) => r[0]?.status === "to retry",
    );
    await db.query(
      "UPDATE attempts SET status = 'failed', error = 'closed by an operator' WHERE config_id = $1",
      [config.id],
    );
    expect(await handle.result()).to.include({ status: "failed", reason: "closed by an operator" });
    expect(requests()).to.have.length(1);
  });

  it("cancels a waiting delivery through the API: failed with reason `cancelled`, workflow cancelled", async () => {
    const { config, handle, requests } = await deliver(later(30));
    await until(
      "the first attempt",
      () => rows(config.id),
      (r) => r[0]?.status === "to retry",
    );
    const webhookId = (await env.api.call("GET", `/configs/${config.id}/attempts`)).body.cursor.data[0]
      .webhookID;
    const cancel = await env.api.call("POST", `/webhooks/${webhookId}/cancel`);
    expect(cancel.status, cancel.text).to.equal(202);
    expect(cancel.body.data).to.deep.equal({
      webhookID: webhookId,
      workflowID: handle.workflowId,
      cancelRequested: true,
    });
    const err = await handle.result().catch((e: Error) => e);
    expect(err).to.be.instanceOf(WorkflowFailedError);
    expect((await handle.describe()).status.name).to.equal("CANCELLED");
    expect((await rows(config.id)).map((r) => [r.status, r.error])).to.deep.equal([["failed", "cancelled"]]);
    const view = await env.api.call("GET", `/webhooks/${webhookId}`);
    expect(view.body.data).to.include({ status: "failed", reason: "cancelled" });
    const again = await env.api.call("POST", `/webhooks/${webhookId}/cancel`);
    expect(again.status).to.equal(409);
    expect(again.body.errorMessage).to.match(/already ended/);
    expect(requests()).to.have.length(1);
  });

  it("cancelled mid-send (as from the Temporal Web UI): the send completes and is recorded, then the row closes", async () => {
    let inSecondSend: (() => void) | undefined;
    const secondSend = new Promise<void>((r) => {
      inSecondSend = r;
    });
    const { config, handle, requests } = await deliver((_req, res, call) => {
      if (call === 1) return res.writeHead(503, { "retry-after": "1" }).end();
      inSecondSend!();
      setTimeout(() => res.writeHead(500).end(), 1500);
    });
    await secondSend;
    await handle.cancel(); // the Web UI's "Request Cancellation" is this same call
    await handle.result().catch(() => {});
    expect((await handle.describe()).status.name).to.equal("CANCELLED");
    expect((await rows(config.id)).map((r) => [r.retry_attempt, r.status, r.error])).to.deep.equal([
      [0, "failed", null],
      [1, "failed", "cancelled"],
    ]);
    await new Promise((r) => setTimeout(r, 1500));
    expect(requests()).to.have.length(2);
  });

  it("reconciliation closes the row of a workflow terminated from the Temporal UI", async () => {
    const { config, handle } = await deliver(later(1));
    await until(
      "the first attempt",
      () => rows(config.id),
      (r) => r[0]?.status === "to retry",
    );
    await handle.terminate("operator stopped it");
    const closed = await until(
      "reconciliation of the terminated delivery",
      () => rows(config.id),
      (r) => r[0]?.status === "failed",
    );
    expect(closed.map((r) => r.error)).to.deep.equal(["workflow terminated"]);
    const metrics = await (await fetch(`${env.api.url}/metrics`)).text();
    expect(metrics).to.match(/webhooks_reconciliation_total\{outcome="closed"\} [1-9]/);
  });

  it("counts a repair once, and leaves alone an ordered key whose sequencer runs (on no worker here)", async () => {
    const closedCount = async () => {
      const text = await (await fetch(`${env.api.url}/metrics`)).text();
      return Number(/webhooks_reconciliation_total\{outcome="closed"\} (\d+)/.exec(text)?.[1] ?? 0);
    };
    const { config, handle } = await deliver(later(1));
    // A key with a stale backlog row whose sequencer runs where no worker polls: running
    // is the authority, whether or not it makes progress; neither walk touches its row.
    const key = await env.temporal.workflow.start("nobodyRunsThis", {
      taskQueue: `no-worker-${Date.now()}`,
      workflowId: `ordered:${config.id}:nobody`,
    });
    const webhookId = randomUUID();
    await db.query(
      `INSERT INTO unsent_deliveries (webhook_id, config_id, workflow_id, payload, reason, accepted_at,
                                      next_try_at, updated_at, ordering_workflow_id)
       VALUES ($1, $2, $3, '{}', 'test', now() - interval '1 hour',
               now() - interval '1 hour', now() - interval '1 hour', $3)`,
      [webhookId, config.id, key.workflowId],
    );
    await db.query(
      `INSERT INTO ordered_backlog (sequencer_id, config_id, ordering_key, webhook_id, created_at)
       VALUES ($1, $2, 'nobody', $3, now() - interval '1 hour')`,
      [key.workflowId, config.id, webhookId],
    );
    try {
      await until(
        "the first attempt",
        () => rows(config.id),
        (r) => r[0]?.status === "to retry",
      );
      const before = await closedCount();
      await handle.terminate("operator stopped it");
      await until(
        "reconciliation of the terminated delivery",
        () => rows(config.id),
        (r) => r[0]?.status === "failed",
      );
      // A few more rounds: the key stays as it was.
      await new Promise((r) => setTimeout(r, 1500));
      expect(await closedCount()).to.equal(before + 1);
      const kept = await db.query(
        "SELECT state::text AS state FROM unsent_deliveries WHERE webhook_id = $1",
        [webhookId],
      );
      expect(kept.rows).to.deep.equal([{ state: "waiting" }]);
    } finally {
      await db.query("DELETE FROM unsent_deliveries WHERE webhook_id = $1", [webhookId]);
      await key.terminate("test over");
    }
  });
});
