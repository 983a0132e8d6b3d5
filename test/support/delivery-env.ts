import { randomBytes } from "node:crypto";
import { Client, Connection } from "@temporalio/client";
import { connect, type NatsConnection } from "nats";
import pg from "pg";
import type { TestDatabase } from "./postgres.js";
import { waitForWorkflow } from "./temporal.js";
import { FAST_RETRIES, startWebhooks, type WebhooksUnderTest } from "./webhooks-server.js";

/**
 * `webhooks serve --worker` with fast retry flags on its own NATS stream,
 * topic and task queue, plus the clients a delivery test needs.
 */
export class DeliveryEnv {
  api!: WebhooksUnderTest;
  nats!: NatsConnection;
  temporal!: Client;
  readonly topic = `events-${randomBytes(4).toString("hex")}`;
  readonly stream = `TEST_${randomBytes(4).toString("hex").toUpperCase()}`;

  /**
   * `temporalAddress`: a Temporal server of the test's own instead of the shared one;
   * `db`: a database of the test's own (left for the test to drop).
   */
  async start(
    args: string[] = [],
    temporalAddress?: string,
    env?: Record<string, string>,
    db?: TestDatabase,
  ): Promise<this> {
    this.api = await startWebhooks({
      worker: true,
      ...(db ? { db } : {}),
      ...(temporalAddress ? { temporalAddress } : {}),
      ...(env ? { env } : {}),
      args: [
        "--broker-topics",
        this.topic,
        "--nats-stream",
        this.stream,
        "--nats-consumer",
        `test-${this.stream.toLowerCase()}`,
        "--audit-topic",
        "",
        ...FAST_RETRIES,
        ...args,
      ],
    });
    this.nats = await connect({ servers: "nats://127.0.0.1:4222" });
    this.temporal = new Client({
      connection: await Connection.connect({ address: this.api.temporalAddress }),
    });
    return this;
  }

  async stop(): Promise<void> {
    await this.api?.stop();
    if (this.nats) {
      await (await this.nats.jetstreamManager()).streams.delete(this.stream).catch(() => {});
      await this.nats.close();
    }
    await this.temporal?.connection.close();
  }

  async createConfig(body: Record<string, unknown>): Promise<{ id: string; secret: string }> {
    const r = await this.api.call("POST", "/configs", {
      eventTypes: ["ledger.committed_transactions"],
      ...body,
    });
    if (r.status !== 200) throw new Error(`create config: ${r.text}`);
    return r.body.data;
  }

  /** Publishes raw bytes or a JSON event to the consumed topic. */
  async publish(message: unknown): Promise<void> {
    const data = typeof message === "string" ? message : JSON.stringify(message);
    await this.nats.jetstream().publish(this.topic, data);
  }

  event(over: Record<string, unknown> = {}) {
    return {
      idempotency_key: `ik-${randomBytes(6).toString("hex")}`,
      date: new Date().toISOString(),
      app: "ledger",
      version: "v2",
      type: "COMMITTED_TRANSACTIONS",
      payload: { ledger: "main", amount: 42 },
      ...over,
    };
  }

  workflowId(configId: string, ik: string): string {
    return `delivery:${configId}:${ik}`;
  }

  // biome-ignore lint/suspicious/noExplicitAny: the workflow result is checked field by field
  async result(configId: string, ik: string, timeoutMs = 30_000): Promise<any> {
    const handle = this.temporal.workflow.getHandle(this.workflowId(configId, ik));
    await waitForWorkflow(handle, timeoutMs);
    return handle.result();
  }

  /** The rows of one statement on the test database. */
  async query<R extends pg.QueryResultRow>(text: string, values: unknown[] = []): Promise<R[]> {
    const client = new pg.Client({ connectionString: this.api.db.url });
    await client.connect();
    try {
      return (await client.query<R>(text, values)).rows;
    } finally {
      await client.end();
    }
  }

  /** Rows of the attempts table for a config, oldest first. */
  attempts(configId: string) {
    return this.query<{
      webhook_id: string;
      retry_attempt: number;
      status: string;
      status_code: number;
      next_retry_after: Date | null;
      error: string | null;
      created_at: Date;
    }>(
      `SELECT webhook_id, retry_attempt, status::text AS status, status_code, next_retry_after, error, created_at
         FROM attempts WHERE config_id = $1 ORDER BY created_at, retry_attempt`,
      [configId],
    );
  }
}
