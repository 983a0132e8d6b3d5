import { randomBytes } from "node:crypto";
import { readdir, readFile } from "node:fs/promises";
import path from "node:path";
import { Kafka, logLevel, type Producer } from "kafkajs";
import { DeliveryEnv } from "./delivery-env.js";
import { sql } from "./poison.js";
import { startWebhooks, type WebhooksUnderTest } from "./webhooks-server.js";

// Helpers of the tests of messages PostgreSQL cannot store as text: the same
// test body runs on NATS and on Kafka, publishing raw bytes and finding the
// dead letter by the position the broker gave them.

/** Four messages PostgreSQL cannot store as text and a leading BOM, as the exact bytes published. */
export function unstorableMessages(tag: string): { name: string; bytes: Buffer; reason: string }[] {
  const event = (fields: string) =>
    Buffer.from(`{"idempotency_key":"${tag}","date":"2026-01-01T00:00:00Z",${fields}}`, "utf8");
  return [
    {
      name: "a NUL in type",
      bytes: event('"app":"ledger","type":"COMMITTED\\u0000TRANSACTIONS","payload":{"n":1}'),
      reason: "not an event message: type: contains a NUL character",
    },
    {
      name: "a NUL in app",
      bytes: event('"app":"led\\u0000ger","type":"COMMITTED_TRANSACTIONS","payload":{"n":1}'),
      reason: "not an event message: app: contains a NUL character",
    },
    {
      name: "a lone surrogate in the payload",
      bytes: event('"app":"ledger","type":"COMMITTED_TRANSACTIONS","payload":{"note":"\\ud800"}'),
      reason: "not an event message: payload.note: contains a lone surrogate (not valid Unicode)",
    },
    {
      name: "invalid UTF-8 bytes",
      bytes: Buffer.concat([
        Buffer.from(
          `{"idempotency_key":"${tag}","app":"ledger","type":"COMMITTED_TRANSACTIONS","payload":{"note":"`,
        ),
        Buffer.from([0xff, 0xfe]),
        Buffer.from('"}}'),
      ]),
      reason: "not an event message: the message is not valid UTF-8",
    },
    {
      // Not one of the issue's four: GET /dead-letters/{id} used to drop a leading BOM.
      name: "a byte order mark before the JSON",
      bytes: Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), event('"type":"COMMITTED_TRANSACTIONS"')]),
      reason: `not an event message: not JSON: ${jsonError(`\ufeff${event('"type":"COMMITTED_TRANSACTIONS"')}`)}`,
    },
  ];
}

/** JSON.parse's message for the text (the service runs the same V8). */
function jsonError(text: string): string {
  try {
    JSON.parse(text);
  } catch (err) {
    return (err as Error).message;
  }
  throw new Error("the text is JSON");
}

/** A valid event of the type the test's config subscribes to. */
export const validEvent = (key: string): Buffer =>
  Buffer.from(
    JSON.stringify({
      idempotency_key: key,
      app: "ledger",
      type: "COMMITTED_TRANSACTIONS",
      payload: { n: 1 },
    }),
  );

/** A webhooks service consuming one topic of one broker, publishing raw bytes to it. */
export interface BrokerUnderTest {
  api: WebhooksUnderTest;
  /** Publishes the bytes as they are; resolves to the position the consumer will report. */
  publish(bytes: Buffer): Promise<string>;
  /** Kafka only: the consumer group's committed offset of partition 0 (-1 when none). */
  committedOffset?(): Promise<number>;
  stop(): Promise<void>;
}

const FAST_REDELIVERY = ["--broker-max-deliveries", "3", "--broker-redelivery-backoff", "1s"];

export async function natsUnderTest(args: string[] = []): Promise<BrokerUnderTest> {
  const env = new DeliveryEnv();
  await env.start([...FAST_REDELIVERY, ...args]);
  return {
    api: env.api,
    async publish(bytes) {
      const ack = await env.nats.jetstream().publish(env.topic, bytes);
      return `nats:${ack.stream}:${ack.seq}`;
    },
    stop: () => env.stop(),
  };
}

export async function kafkaUnderTest(args: string[] = []): Promise<BrokerUnderTest> {
  const suffix = randomBytes(4).toString("hex");
  const topic = `test-unstorable-${suffix}`;
  const group = `unstorable-${suffix}`;
  const kafka = new Kafka({
    clientId: "unstorable-test",
    brokers: ["127.0.0.1:9092"],
    logLevel: logLevel.NOTHING,
  });
  const producer: Producer = kafka.producer();
  await producer.connect();
  const admin = kafka.admin();
  await admin.connect();
  const publish = async (bytes: Buffer) => {
    const [meta] = await producer.send({ topic, messages: [{ value: bytes }] });
    return `kafka:${topic}:${meta!.partition}:${meta!.baseOffset}`;
  };
  await publish(validEvent("warm-up")); // creates the topic before the consumer subscribes
  const api = await startWebhooks({
    worker: true,
    args: [
      ...["--broker", "kafka", "--broker-topics", topic, "--kafka-consumer-group", group],
      ...["--audit-topic", "", ...FAST_REDELIVERY, ...args],
    ],
  });
  return {
    api,
    publish,
    async committedOffset() {
      const [offsets] = await admin.fetchOffsets({ groupId: group, topics: [topic] });
      return Number(offsets?.partitions.find((p) => p.partition === 0)?.offset ?? -1);
    },
    async stop() {
      await api.stop();
      await producer.disconnect();
      await admin.disconnect();
    },
  };
}

export interface StoredDeadLetter {
  id: string;
  message: Buffer;
  kind: string;
  reason: string;
  delivery_count: number;
  event_type: string | null;
}

/** The dead letter of a message position, if there is one. */
export async function deadLetterAt(
  api: WebhooksUnderTest,
  position: string,
): Promise<StoredDeadLetter | undefined> {
  const [row] = await sql<StoredDeadLetter>(
    api,
    `SELECT id, message, kind::text AS kind, reason, delivery_count, event_type
       FROM dead_letters WHERE position = $1`,
    [position],
  );
  return row;
}

/** Parked dead letters in a spool folder: each sidecar with the bytes of its message. */
export async function parked(dir: string): Promise<{ meta: Record<string, unknown>; bytes: Buffer }[]> {
  const names = await readdir(dir).catch(() => [] as string[]);
  return Promise.all(
    names
      .filter((n) => n.endsWith(".json"))
      .map(async (n) => ({
        meta: JSON.parse(await readFile(path.join(dir, n), "utf8")) as Record<string, unknown>,
        bytes: await readFile(path.join(dir, n.replace(/\.json$/, ".msg"))),
      })),
  );
}

/** Makes every write to dead_letters fail (a trigger that raises) until the returned function runs. */
export async function refuseDeadLetters(api: WebhooksUnderTest): Promise<() => Promise<void>> {
  await sql(
    api,
    `CREATE FUNCTION test_refuse_dead_letters() RETURNS trigger LANGUAGE plpgsql AS
       $$BEGIN RAISE EXCEPTION 'dead letters refused by the test'; END$$`,
  );
  await sql(
    api,
    `CREATE TRIGGER test_refuse_dead_letters BEFORE INSERT OR UPDATE ON dead_letters
       FOR EACH ROW EXECUTE FUNCTION test_refuse_dead_letters()`,
  );
  return async () => {
    await sql(api, "DROP TRIGGER test_refuse_dead_letters ON dead_letters");
    await sql(api, "DROP FUNCTION test_refuse_dead_letters()");
  };
}
