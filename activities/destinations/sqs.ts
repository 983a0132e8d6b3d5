import { createHash } from "node:crypto";
import http from "node:http";
import https from "node:https";
import { type MessageAttributeValue, SendMessageCommand, SQSClient } from "@aws-sdk/client-sqs";
import type { DestinationSecret, SqsDestination } from "../../core/destinations.js";
import { EgressDenied, type EgressPolicy } from "../../core/egress-policy.js";
import {
  acknowledged,
  type BrokerConnection,
  CONNECT_TIMEOUT_MS,
  commonFailure,
  headersWithKey,
  notDelivered,
  type SendResult,
  within,
} from "./message.js";

// An SQS queue (Amazon SQS or a server speaking its API, such as ElasticMQ) as a
// destination: one client per config, signed with the config's own sealed access key (never
// the process's ambient AWS credentials), its sockets opened through the egress policy. One
// delivery is one SendMessage, counted as sent once the queue answered with a message id.
// The delivery's headers are String message attributes. A FIFO queue (a name ending in
// .fifo) gets the ordering key as MessageGroupId, so a key's messages are received in the
// order sent, and the webhook id as MessageDeduplicationId, so a send retried after a lost
// answer is dropped as a duplicate within SQS's five-minute window. A standard queue keeps no
// order; the key travels in svc-webhook-ordering-key either way.

// The pinned SDK runs on this project's Node 20; its notice that releases from 2027 on need
// Node 22 concerns whoever moves the pin (package.json), not an operator: not printed unless
// the environment asks for it.
process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED ??= "true";

/** SendMessage errors no retry of the same message can fix (its body or attributes are refused). */
const PERMANENT = new Set([
  "InvalidMessageContents",
  "InvalidParameterValue",
  "InvalidParameterValueException",
  "InvalidAttributeName",
  "InvalidAttributeValue",
]);

/** What the SDK throws: a service error's name is its code (QueueDoesNotExist), a network error's code is Node's (ECONNREFUSED). */
type SqsError = Error & { code?: string; $metadata?: { httpStatusCode?: number } };

export const isFifoQueue = (target: SqsDestination) => target.queueUrl.endsWith(".fifo");

/**
 * A FIFO queue's MessageGroupId for an ordering key: the key itself when SQS takes it as it
 * is (1 to 128 printable ASCII characters), else a hash of it, so every key keeps one group.
 * Keys that look like a hash are hashed too, so two keys never share a group.
 */
export function messageGroupId(key: string): string {
  if (/^[\x21-\x7e]{1,128}$/.test(key) && !key.startsWith("h:")) return key;
  return `h:${createHash("sha256").update(key).digest("base64url")}`;
}

/** The message's headers as String attributes (SQS refuses an empty value: those are left out). */
function attributesOf(headers: Record<string, string>): Record<string, MessageAttributeValue> {
  const out: Record<string, MessageAttributeValue> = {};
  for (const [name, value] of Object.entries(headers))
    if (value !== "") out[name] = { DataType: "String", StringValue: value };
  return out;
}

/** A client for the queue; rejects with EgressDenied when the queue URL's host is an address the policy denies. */
export async function openSqs(
  target: SqsDestination,
  secret: DestinationSecret,
  egress: EgressPolicy,
): Promise<BrokerConnection> {
  const url = new URL(target.queueUrl);
  // An address literal skips the lookup: checked here; a name is checked as it resolves.
  const denied = egress.literalReason(url);
  if (denied) throw new EgressDenied(`egress policy: ${denied}`);
  const agentOptions = { keepAlive: true, maxSockets: 8, lookup: egress.lookup };
  const httpAgent = new http.Agent(agentOptions);
  const httpsAgent = new https.Agent(agentOptions);
  const client = new SQSClient({
    region: target.region,
    endpoint: url.origin,
    credentials: { accessKeyId: secret.accessKeyId ?? "", secretAccessKey: secret.secretAccessKey ?? "" },
    // The attempt is the retry (under the config's policy): none inside it.
    maxAttempts: 1,
    requestHandler: { httpAgent, httpsAgent, connectionTimeout: CONNECT_TIMEOUT_MS },
  });
  const fifo = isFifoQueue(target);
  return {
    async send(message) {
      const started = Date.now();
      const abort = new AbortController();
      try {
        const answer = await within(
          message.timeoutMs,
          `the send to SQS queue ${target.queueUrl}`,
          client.send(
            new SendMessageCommand({
              QueueUrl: target.queueUrl,
              MessageBody: message.body,
              MessageAttributes: attributesOf(headersWithKey(message)),
              ...(fifo
                ? {
                    // An unordered config's event without a key is a group of its own: it holds back no other.
                    MessageGroupId: messageGroupId(message.key ?? message.id),
                    MessageDeduplicationId: message.id,
                  }
                : {}),
            }),
            { abortSignal: abort.signal },
          ),
        );
        return acknowledged(
          started,
          `sqs ${target.queueUrl} message ${answer.MessageId}${answer.SequenceNumber ? ` seq ${answer.SequenceNumber}` : ""}`,
        );
      } catch (err) {
        abort.abort();
        return sqsFailure(started, target, err as SqsError);
      }
    },
    close: async () => {
      client.destroy();
      httpAgent.destroy();
      httpsAgent.destroy();
    },
  };
}

/** A failed send as an attempt's outcome: retried (a queue may be created, a server restarted, a key fixed) unless the message itself is refused. */
export function sqsFailure(started: number, target: SqsDestination, err: SqsError): SendResult {
  const common = commonFailure(started, err);
  if (common) return common;
  // The policy's lookup refused every address of the queue's host (the SDK passes its error on).
  if (err.code === "EGRESS_DENIED") return notDelivered(started, err.message, true);
  const status = err.$metadata?.httpStatusCode;
  const what = [err.name === "Error" ? err.code : err.name, status ? `HTTP ${status}` : undefined]
    .filter(Boolean)
    .join(" ");
  if (err.name === "QueueDoesNotExist" || err.name === "AWS.SimpleQueueService.NonExistentQueue")
    return notDelivered(
      started,
      `sqs: queue ${JSON.stringify(target.queueUrl)} does not exist (deliveries do not create queues): ${err.message}`,
    );
  return notDelivered(started, `sqs${what ? ` ${what}` : ""}: ${err.message}`, PERMANENT.has(err.name));
}
