import { EgressDenied } from "../../core/egress-policy.js";

// What every destination is handed and answers. A send (activities/send-destination.ts)
// builds one message: the bytes an HTTP delivery would POST and the headers it would carry
// (signature, id, timestamp, test flag, idempotency key, batch ids); a broker destination
// publishes them as record headers (Kafka), message headers (NATS), properties (AMQP) or
// message attributes (SQS) and answers with a SendResult, as an HTTP send does, so every
// step above the send (retries, caps, ordering, batching, rows) is the same for every
// destination.

/** One send's outcome. */
export interface SendResult {
  /**
   * HTTP status, or 0 when no answer came (connection error, timeout, bad redirect, denied).
   * A broker's acknowledgement of the message is 200.
   */
  statusCode: number;
  retryAfterMs?: number;
  error?: string;
  /**
   * Nothing reached the receiver and no retry can change that: the egress policy refused
   * an address, or Node could not build the request from what the delivery holds.
   */
  permanent?: boolean;
  /** The answer's first bytes (RESPONSE_EXCERPT_BYTES), the endpoint's credentials masked. */
  responseExcerpt: string;
  /** The headers of the last POST sent, the endpoint's own masked (activities/attempt-exchange.ts); absent when none was sent. */
  requestHeaders?: Record<string, string> | undefined;
  /** The answer's headers worth keeping (activities/attempt-exchange.ts). */
  responseHeaders?: Record<string, string> | undefined;
  durationMs: number;
}

/** One message for a broker. */
export interface DestinationMessage {
  /**
   * The webhook id (a batch's id for a batch): NATS's Nats-Msg-Id, AMQP's message-id, an SQS
   * FIFO queue's MessageDeduplicationId.
   */
  id: string;
  body: string;
  /** Header names in lower case, as an HTTP delivery's. */
  headers: Record<string, string>;
  /** The ordering key: a Kafka record's key (one partition per key); absent, none. */
  key?: string | undefined;
  /** How long the publish and its acknowledgement may take. */
  timeoutMs: number;
}

/** A connection to one config's broker destination: sends, and is closed when the config changes or the process stops. */
export interface BrokerConnection {
  send(message: DestinationMessage): Promise<SendResult>;
  close(): Promise<void>;
}

/** The message's headers and, when it has an ordering key, svc-webhook-ordering-key (AMQP, SQS). */
export const headersWithKey = (message: DestinationMessage): Record<string, string> => ({
  ...message.headers,
  ...(message.key !== undefined ? { "svc-webhook-ordering-key": message.key } : {}),
});

/** An acknowledged publish; `ack` says where it went (the log's response excerpt). */
export const acknowledged = (started: number, ack: string): SendResult => ({
  statusCode: 200,
  responseExcerpt: ack,
  durationMs: Date.now() - started,
});

/** A publish that failed: retried under the policy unless `permanent`. */
export const notDelivered = (started: number, error: string, permanent = false): SendResult => ({
  statusCode: 0,
  error,
  ...(permanent ? { permanent } : {}),
  responseExcerpt: "",
  durationMs: Date.now() - started,
});

/** How long connecting to a broker may take. */
export const CONNECT_TIMEOUT_MS = 3000;

export class SendTimeout extends Error {}

/**
 * What any destination makes of a send that timed out (retried) or that the egress policy
 * refused (permanent); undefined for another error, which the destination describes.
 */
export function commonFailure(started: number, err: Error): SendResult | undefined {
  if (err instanceof SendTimeout) return notDelivered(started, err.message);
  if (err instanceof EgressDenied) return notDelivered(started, err.message, true);
  return undefined;
}

/**
 * `work` bounded by `ms`: past it, a SendTimeout. The publish may still complete after
 * that (as a timed out POST may have reached its receiver): the attempt is retried, and
 * the consumer sees the message again under the same webhook id.
 */
export async function within<T>(ms: number, what: string, work: Promise<T>): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new SendTimeout(`timeout: ${what} took over ${ms} ms`)), ms);
  });
  try {
    return await Promise.race([work, timeout]);
  } finally {
    clearTimeout(timer);
  }
}
