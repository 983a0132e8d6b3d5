// tags: @needs-services (ElasticMQ, the SQS-compatible server scripts/elasticmq.sh runs)
import { execFile } from "node:child_process";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import {
  CreateQueueCommand,
  DeleteMessageCommand,
  DeleteQueueCommand,
  type Message,
  ReceiveMessageCommand,
  SQSClient,
} from "@aws-sdk/client-sqs";
import { freePort } from "./ports.js";
import { ServiceProcess } from "./process.js";

// As in activities/destinations/sqs.ts: the pinned SDK's notice about Node 22 is not for a test run.
process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED ??= "true";

/** Where scripts/elasticmq.sh serves SQS for the tests; its queue URLs are `${SQS_ENDPOINT}/000000000000/<queue>`. */
export const SQS_ENDPOINT = "http://127.0.0.1:9324";
/** ElasticMQ checks no signature: any key does, and the destination needs one. */
export const SQS_KEY = { accessKeyId: "test-key-id", secretAccessKey: "test-secret-key" };

const script = () => fileURLToPath(new URL("../../../scripts/elasticmq.sh", import.meta.url));

/** Starts the shared server when it does not run yet (the script returns at once when it does). */
export async function ensureElasticMq(): Promise<void> {
  await promisify(execFile)("bash", [script()], { timeout: 280_000 });
}

/** A test-side client of the server at `endpoint` (signed with SQS_KEY). */
export const sqsClient = (endpoint: string) =>
  // A copy: the SDK marks the credentials object it is handed (a $source field).
  new SQSClient({ region: "us-east-1", endpoint, credentials: { ...SQS_KEY }, maxAttempts: 2 });

/** Creates a queue (FIFO when the name ends in .fifo) and answers its URL. */
export async function createQueue(client: SQSClient, name: string): Promise<string> {
  const fifo = name.endsWith(".fifo");
  const r = await client.send(
    new CreateQueueCommand({
      QueueName: name,
      ...(fifo ? { Attributes: { FifoQueue: "true" } } : {}),
    }),
  );
  return r.QueueUrl!;
}

export const deleteQueue = (client: SQSClient, queueUrl: string) =>
  client.send(new DeleteQueueCommand({ QueueUrl: queueUrl })).then(() => undefined);

/** What a consumer receives of one message: its attributes as strings, body, and a FIFO queue's group, deduplication id and sequence. */
export interface Received {
  attributes: Record<string, string>;
  body: string;
  groupId?: string | undefined;
  deduplicationId?: string | undefined;
  sequence?: string | undefined;
  messageId: string;
}

const receivedOf = (m: Message): Received => ({
  attributes: Object.fromEntries(
    Object.entries(m.MessageAttributes ?? {}).map(([k, v]) => [k, v.StringValue ?? ""]),
  ),
  body: m.Body ?? "",
  groupId: m.Attributes?.MessageGroupId,
  deduplicationId: m.Attributes?.MessageDeduplicationId,
  sequence: m.Attributes?.SequenceNumber,
  messageId: m.MessageId ?? "",
});

/**
 * Receives (and deletes) what the queue holds, one short poll after another, until
 * `enough` of it arrived or `ms` passed; the messages in the order received.
 */
export async function drain(
  client: SQSClient,
  queueUrl: string,
  enough: number,
  ms = 60_000,
): Promise<Received[]> {
  const got: Received[] = [];
  const deadline = Date.now() + ms;
  while (got.length < enough && Date.now() < deadline) {
    const r = await client.send(
      new ReceiveMessageCommand({
        QueueUrl: queueUrl,
        MaxNumberOfMessages: 10,
        WaitTimeSeconds: 1,
        MessageAttributeNames: ["All"],
        MessageSystemAttributeNames: ["MessageGroupId", "MessageDeduplicationId", "SequenceNumber"],
      }),
    );
    for (const m of r.Messages ?? []) {
      got.push(receivedOf(m));
      // Deleted at once: a FIFO group's next message is only handed out once this one is gone.
      await client.send(new DeleteMessageCommand({ QueueUrl: queueUrl, ReceiptHandle: m.ReceiptHandle! }));
    }
  }
  return got;
}

/**
 * An ElasticMQ server of the test's own on a free port (the jars scripts/elasticmq.sh
 * fetched), so that a test may stop or freeze it without touching the shared one.
 */
export class PrivateElasticMq {
  private process: ServiceProcess | undefined;
  private dir = "";
  port = 0;

  get endpoint(): string {
    return `http://127.0.0.1:${this.port}`;
  }

  /** Starts the server on `port` (a free one unless set before). */
  async start(): Promise<this> {
    const { stdout } = await promisify(execFile)("bash", [script(), "classpath"], { timeout: 280_000 });
    this.port ||= await freePort();
    this.dir = await mkdtemp(path.join(tmpdir(), "elasticmq-"));
    const conf = path.join(this.dir, "elasticmq.conf");
    await writeFile(
      conf,
      [
        'include classpath("application.conf")',
        `node-address { protocol = "http", host = "127.0.0.1", port = ${this.port}, context-path = "" }`,
        `rest-sqs { enabled = true, bind-port = ${this.port}, bind-hostname = "127.0.0.1", sqs-limits = strict }`,
        "rest-stats { enabled = false }",
        "",
      ].join("\n"),
    );
    this.process = new ServiceProcess({ file: "java", cwd: this.dir }, [
      "-Xms64m",
      "-Xmx256m",
      "-XX:+UseSerialGC",
      "-XX:TieredStopAtLevel=1",
      `-Dconfig.file=${conf}`,
      "-cp",
      stdout.trim(),
      "org.elasticmq.server.Main",
    ]);
    await this.process.waitHealthy(`${this.endpoint}/?Action=ListQueues`, 120_000);
    return this;
  }

  /** SIGSTOP: connections are accepted by the kernel but nothing answers. */
  freeze(): void {
    this.process?.child.kill("SIGSTOP");
  }

  resume(): void {
    this.process?.child.kill("SIGCONT");
  }

  async stop(): Promise<void> {
    this.resume();
    await this.process?.stop("SIGKILL");
    if (this.dir) await rm(this.dir, { recursive: true, force: true });
  }
}
