import net from "node:net";
import tls from "node:tls";
import { type ISocketFactory, Kafka, logLevel, type SASLOptions } from "kafkajs";
import type { DestinationSecret, KafkaDestination } from "../../core/destinations.js";
import { EgressDenied, type EgressPolicy } from "../../core/egress-policy.js";
import { checkEgress } from "./egress.js";
import {
  acknowledged,
  type BrokerConnection,
  CONNECT_TIMEOUT_MS,
  notDelivered,
  type SendResult,
  SendTimeout,
  within,
} from "./message.js";

// A Kafka topic as a destination: one producer per config, acks from all in-sync replicas,
// the delivery's headers as record headers and the ordering key as the record key (so a
// key's events share a partition, in the order the delivery engine sends them). Topics are
// never created by a delivery: a topic that does not exist is an attempt that says so,
// retried, so creating the topic lets the delivery go on.

/** Protocol errors no retry of the same message can fix. */
const PERMANENT = new Set([
  "INVALID_TOPIC_EXCEPTION",
  "MESSAGE_TOO_LARGE",
  "RECORD_LIST_TOO_LARGE",
  "INVALID_RECORD",
]);

type KafkaError = Error & { type?: string; originalError?: unknown; cause?: unknown; retriable?: boolean };

/** The innermost protocol error of a kafkajs error (retries wrap the one that counted). */
function rootOf(err: KafkaError): KafkaError {
  let e = err;
  for (let i = 0; i < 5; i++) {
    const inner = (e.originalError ?? e.cause) as KafkaError | undefined;
    if (!inner || !(inner instanceof Error)) break;
    e = inner;
  }
  return e;
}

/** Sockets opened through the egress policy: every broker the client connects to, bootstrap or discovered. */
const socketFactory =
  (egress: EgressPolicy): ISocketFactory =>
  ({ host, port, ssl, onConnect }) => {
    const denied = net.isIP(host) ? egress.reason(host) : undefined;
    if (denied) {
      const socket = new net.Socket();
      process.nextTick(() => socket.destroy(new EgressDenied(`egress policy: ${denied}`)));
      return socket;
    }
    const socket = ssl
      ? tls.connect(
          { host, port, lookup: egress.lookup, ...(net.isIP(host) ? {} : { servername: host }), ...ssl },
          onConnect,
        )
      : net.connect({ host, port, lookup: egress.lookup }, onConnect);
    socket.setKeepAlive(true, 60_000);
    return socket;
  };

function saslOf(target: KafkaDestination, secret: DestinationSecret): SASLOptions | undefined {
  if (!target.sasl) return undefined;
  return {
    mechanism: target.sasl.mechanism,
    username: target.sasl.username,
    password: secret.password ?? "",
  } as SASLOptions;
}

/** A connected producer for the topic; rejects (EgressDenied among others) when it cannot connect. */
export async function openKafka(
  target: KafkaDestination,
  secret: DestinationSecret,
  egress: EgressPolicy,
): Promise<BrokerConnection> {
  await checkEgress(egress, target.brokers);
  const sasl = saslOf(target, secret);
  const kafka = new Kafka({
    clientId: "etp-webhooks",
    brokers: target.brokers,
    ...(target.ssl ? { ssl: true } : {}),
    ...(sasl ? { sasl } : {}),
    connectionTimeout: CONNECT_TIMEOUT_MS,
    // The attempt is the retry: one quick retry inside it for a leader that just moved.
    retry: { retries: 1, initialRetryTime: 200, maxRetryTime: 1000 },
    socketFactory: socketFactory(egress),
    logLevel: logLevel.NOTHING,
  });
  const producer = kafka.producer({ allowAutoTopicCreation: false });
  await within(
    CONNECT_TIMEOUT_MS * 2,
    `connecting to Kafka ${target.brokers.join(",")}`,
    producer.connect(),
  ).catch(async (err) => {
    await producer.disconnect().catch(() => undefined);
    throw err;
  });
  return {
    async send(message) {
      const started = Date.now();
      try {
        const [meta] = await within(
          message.timeoutMs,
          `the publish to Kafka topic ${target.topic}`,
          producer.send({
            topic: target.topic,
            acks: -1,
            timeout: message.timeoutMs,
            messages: [
              {
                ...(message.key !== undefined ? { key: message.key } : {}),
                value: message.body,
                headers: message.headers,
              },
            ],
          }),
        );
        return acknowledged(
          started,
          `kafka ${target.topic} partition ${meta?.partition} offset ${meta?.baseOffset}`,
        );
      } catch (err) {
        return kafkaFailure(started, target, err as KafkaError);
      }
    },
    close: () => producer.disconnect(),
  };
}

/** A failed publish as an attempt's outcome: retried, unless the message itself can never be taken. */
export function kafkaFailure(started: number, target: KafkaDestination, err: KafkaError): SendResult {
  if (err instanceof SendTimeout) return notDelivered(started, err.message);
  const root = rootOf(err);
  if (root instanceof EgressDenied) return notDelivered(started, root.message, true);
  if (root.type === "UNKNOWN_TOPIC_OR_PARTITION")
    return notDelivered(
      started,
      `kafka: topic ${JSON.stringify(target.topic)} does not exist (deliveries do not create topics): ${root.message}`,
    );
  const what = root.type ?? root.name;
  const text = root.message === err.message ? err.message : `${err.message}: ${root.message}`;
  return notDelivered(started, `kafka ${what}: ${text}`, PERMANENT.has(root.type ?? ""));
}
