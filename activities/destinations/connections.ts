import { createHash } from "node:crypto";
import type { Logger } from "../../common/logger.js";
import type { BrokerDestination, DestinationSecret } from "../../core/destinations.js";
import type { EgressPolicy } from "../../core/egress-policy.js";
import { amqpFailure, openAmqp } from "./amqp.js";
import { kafkaFailure, openKafka } from "./kafka.js";
import {
  type BrokerConnection,
  type DestinationMessage,
  notDelivered,
  type SendResult,
  within,
} from "./message.js";
import { natsFailure, openNats } from "./nats.js";
import { openSqs, sqsFailure } from "./sqs.js";

// The broker connections of a process (an SQS queue's client counts as one): one per
// config, opened at its first send and kept for the next ones. A config whose destination
// or credential changed gets a new one (the old one is closed); a failed send closes it, so
// the next send connects afresh (a broker that restarted, a leader that moved); one unused
// for a while is closed; all are closed when the process stops (a shutdown step,
// workers/delivery-worker.ts and api/serve.ts).

/** A connection unused this long is closed. */
export const IDLE_CLOSE_MS = 5 * 60_000;
/** Opening a connection counts against the send's timeout; this bounds it on its own. */
const OPEN_TIMEOUT_MS = 10_000;

interface Open {
  version: string;
  connection: Promise<BrokerConnection>;
  lastUsed: number;
}

/** What one send to a broker needs: which config, its destination and opened credential. */
export interface BrokerTarget {
  configId: string;
  destination: BrokerDestination;
  secret: DestinationSecret;
}

export class BrokerConnections {
  private readonly open = new Map<string, Open>();
  private readonly sweep: NodeJS.Timeout;
  private closed = false;

  constructor(
    private readonly egress: EgressPolicy,
    private readonly logger: Logger,
  ) {
    this.sweep = setInterval(() => this.closeIdle(), Math.min(IDLE_CLOSE_MS, 60_000));
    this.sweep.unref();
  }

  /** Publishes one message to the target; never throws for the broker's behaviour: that is the result. */
  async send(target: BrokerTarget, message: DestinationMessage): Promise<SendResult> {
    const started = Date.now();
    if (this.closed) return notDelivered(started, "not sent: the process is shutting down");
    const entry = this.entryFor(target);
    let connection: BrokerConnection;
    try {
      connection = await within(
        Math.min(OPEN_TIMEOUT_MS, message.timeoutMs),
        "connecting to the broker",
        entry.connection,
      );
    } catch (err) {
      this.drop(target.configId, entry);
      return failureOf(started, target.destination, err as Error);
    }
    entry.lastUsed = Date.now();
    const result = await connection.send({
      ...message,
      timeoutMs: Math.max(1, message.timeoutMs - (Date.now() - started)),
    });
    if (result.statusCode === 0) this.drop(target.configId, entry);
    return { ...result, durationMs: Date.now() - started };
  }

  /** Closes every connection; later sends are refused (the process is stopping). */
  async close(): Promise<void> {
    this.closed = true;
    clearInterval(this.sweep);
    const all = [...this.open.entries()];
    this.open.clear();
    await Promise.all(all.map(([configId, e]) => this.closeEntry(configId, e)));
  }

  /** How many connections are open or opening (tests). */
  get size(): number {
    return this.open.size;
  }

  private entryFor(target: BrokerTarget): Open {
    const version = versionOf(target);
    const current = this.open.get(target.configId);
    if (current?.version === version) return current;
    if (current) {
      this.open.delete(target.configId);
      void this.closeEntry(target.configId, current);
    }
    const connection = openBroker(target, this.egress);
    connection.catch(() => undefined);
    const entry: Open = { version, connection, lastUsed: Date.now() };
    this.open.set(target.configId, entry);
    return entry;
  }

  private drop(configId: string, entry: Open): void {
    if (this.open.get(configId) !== entry) return;
    this.open.delete(configId);
    void this.closeEntry(configId, entry);
  }

  private closeIdle(): void {
    const before = Date.now() - IDLE_CLOSE_MS;
    for (const [configId, e] of this.open) if (e.lastUsed < before) this.drop(configId, e);
  }

  private async closeEntry(configId: string, entry: Open): Promise<void> {
    try {
      await (await entry.connection).close();
    } catch (err) {
      // Never opened, or already broken: nothing left to close.
      this.logger.debug({ configId, err: (err as Error).message }, "broker connection closed with an error");
    }
  }
}

/** Changes when the destination or its credential changes: the connection is then opened again. */
const versionOf = (t: BrokerTarget) =>
  createHash("sha256")
    .update(JSON.stringify([t.destination, t.secret]))
    .digest("hex");

function openBroker(
  { destination: d, secret }: BrokerTarget,
  egress: EgressPolicy,
): Promise<BrokerConnection> {
  switch (d.type) {
    case "kafka":
      return openKafka(d, secret, egress);
    case "nats":
      return openNats(d, secret, egress);
    case "amqp":
      return openAmqp(d, secret, egress);
    case "sqs":
      return openSqs(d, secret, egress);
  }
}

function failureOf(started: number, d: BrokerDestination, err: Error): SendResult {
  switch (d.type) {
    case "kafka":
      return kafkaFailure(started, d, err);
    case "nats":
      return natsFailure(started, d, err);
    case "amqp":
      return amqpFailure(started, err);
    case "sqs":
      return sqsFailure(started, d, err);
  }
}
