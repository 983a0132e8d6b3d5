// tags: @temporal-server-only (only on the production Temporal server, npm run test:temporal-server:
// the server hands a killed worker's tasks to the others)
import { randomBytes } from "node:crypto";
import { Client, Connection } from "@temporalio/client";
import { expect } from "chai";
import { connect, type NatsConnection } from "nats";
import pg from "pg";
import type { ServiceProcess } from "../support/process.js";
import { Receiver } from "../support/receiver.js";
import { waitForWorkflow } from "../support/temporal.js";
import { startWebhooks, type WebhooksUnderTest } from "../support/webhooks-server.js";
import { startWorkerProcess, testStream } from "../support/worker-process.js";

/**
 * Workers scaled per task queue: one process consumes events and runs workflow
 * tasks, two run only HTTP sends; one of those is killed -9 mid-run.
 */
describe("scaling by task queue and surviving a killed worker", function () {
  this.timeout(180_000);
  const { topic, stream } = testStream();
  let api: WebhooksUnderTest;
  let receiver: Receiver;
  let nats: NatsConnection;
  let temporal: Client;
  const workers: ServiceProcess[] = [];

  const startWorker = async (queues: string, consume: boolean, extra: string[] = []) => {
    const w = await startWorkerProcess(api, { topic, stream, consumer: `scale-${stream.toLowerCase()}` }, [
      "--task-queues",
      queues,
      ...(consume ? [] : ["--no-consume"]),
      "--max-concurrent-sends",
      "5",
      ...extra,
    ]);
    workers.push(w);
    return w;
  };

  before(async () => {
    api = await startWebhooks({ args: ["--audit-topic", ""] });
    receiver = await new Receiver().start();
    nats = await connect({ servers: "nats://127.0.0.1:4222" });
    temporal = new Client({ connection: await Connection.connect({ address: api.temporalAddress }) });
  });

  after(async () => {
    await Promise.all(workers.map((w) => w.stop()));
    await receiver?.stop();
    await api?.stop();
    await (await nats?.jetstreamManager())?.streams.delete(stream).catch(() => {});
    await nats?.close();
    await temporal?.connection.close();
  });

  it("completes every delivery on the remaining worker, with one attempt row each", async () => {
    // Sends on the sends queue from the first attempt (not the default local-first).
    const flow = await startWorker("workflows,maintenance", true, ["--send-mode", "queue"]);
    const sendA = await startWorker("sends", false);
    const sendB = await startWorker("sends", false);
    // Slow answers keep sends in flight on both send workers when one dies.
    receiver.respond = (_req, res) => {
      setTimeout(() => res.writeHead(200).end("ok"), 400);
    };
    const { configId, keys } = await publishDeliveries("ledger.scaled", 40);
    // Both send workers take work; then one dies with sends in flight.
    await sendA.waitForOutput('"msg":"webhook attempt"', 60_000);
    await sendB.waitForOutput('"msg":"webhook attempt"', 60_000);
    sendA.child.kill("SIGKILL");

    for (const key of keys) expect((await resultOf(configId, key)).status, key).to.equal("success");
    expect(flow.output).to.not.include('"msg":"webhook attempt"');

    await expectDeliveredOnce(configId, keys);
  });

  it("with --send-mode local, completes every delivery after a workflow worker is killed mid-send", async () => {
    // The first test's workers would consume these events in queue mode.
    await Promise.all(workers.splice(0).map((w) => w.stop()));
    const local = ["--send-mode", "local"];
    // Eager start would hand the consumer's own worker every delivery it has a slot for; both must get some.
    const flowA = await startWorker("workflows", true, [...local, "--no-eager-start"]);
    const flowB = await startWorker("workflows", false, local);
    receiver.respond = (_req, res) => {
      setTimeout(() => res.writeHead(200).end("ok"), 400);
    };
    const { configId, keys } = await publishDeliveries("ledger.scaled_local", 40);
    await flowA.waitForOutput('"msg":"webhook attempt"', 60_000);
    await flowB.waitForOutput('"msg":"webhook attempt"', 60_000);
    flowB.child.kill("SIGKILL");
    for (const key of keys) expect((await resultOf(configId, key)).status, key).to.equal("success");
    await expectDeliveredOnce(configId, keys);
  });

  /**
   * The result of one delivery. Its workflow may not exist yet: the consumer starts at most
   * --max-deliveries-in-flight deliveries with a send under way, and the rest after them.
   */
  async function resultOf(configId: string, key: string) {
    const handle = temporal.workflow.getHandle(`delivery:${configId}:${key}`);
    await waitForWorkflow(handle, 60_000);
    return handle.result();
  }

  /** One config and `n` events for it; resolves once they are published. */
  async function publishDeliveries(eventType: string, n: number) {
    const created = await api.call("POST", "/configs", {
      endpoint: receiver.url.replace("/hook", `/${eventType}`),
      eventTypes: [eventType],
    });
    const configId: string = created.body.data.id;
    const [app, type] = eventType.split(".");
    const keys = Array.from({ length: n }, (_, i) => `scale-${i}-${randomBytes(3).toString("hex")}`);
    const js = nats.jetstream();
    for (const key of keys) {
      await js.publish(topic, JSON.stringify({ idempotency_key: key, app, type, payload: { key } }));
    }
    return { configId, keys };
  }

  /** One success row per delivery; at most the sends in flight on the killed worker repeated. */
  async function expectDeliveredOnce(configId: string, keys: string[]) {
    const client = new pg.Client({ connectionString: api.db.url });
    await client.connect();
    const { rows } = await client.query(
      "SELECT webhook_id, count(*)::int AS n, min(status::text) AS status FROM attempts WHERE config_id = $1 GROUP BY webhook_id",
      [configId],
    );
    await client.end();
    expect(rows).to.have.length(keys.length);
    expect(rows.every((r) => r.n === 1 && r.status === "success")).to.equal(true);
    const mine = receiver.requests.filter((r) => keys.includes(JSON.parse(r.body).idempotency_key));
    expect(new Set(mine.map((r) => JSON.parse(r.body).idempotency_key)).size).to.equal(keys.length);
    expect(mine.length - keys.length).to.be.at.most(5);
  }
});
