/** One message taken from a broker; the handler's outcome decides ack or redelivery. */
export interface BrokerMessage {
  topic: string;
  data: Uint8Array;
  /** How many times the broker delivered it (1 the first time). */
  deliveryCount: number;
  /** Where the broker holds it: `nats:<stream>:<sequence>` or `kafka:<topic>:<partition>:<offset>`. */
  position: string;
}

/** Returns normally to acknowledge; throws to have the broker deliver the message again later. */
export type MessageHandler = (msg: BrokerMessage) => Promise<void>;

/** What a consumer does with a message whose handler threw, and when it reports itself stuck. */
export interface Redelivery {
  /**
   * Broker deliveries of one message at most (its first delivery and each redelivery, not webhook
   * deliveries); the handler is expected to settle it at the last one.
   */
  maxBrokerDeliveries: number;
  /** Waits before the 2nd, 3rd, … delivery, in ms (the last one repeats). */
  backoffMs: number[];
  /** Messages waiting and none settled for this long means stuck (0: never reported). */
  stuckAfterMs: number;
}

/** The wait before the delivery that follows delivery number `deliveryCount`. */
export const redeliveryDelay = (r: Redelivery, deliveryCount: number): number =>
  r.backoffMs.length === 0 ? 0 : r.backoffMs[Math.min(deliveryCount, r.backoffMs.length) - 1]!;

/** Called for a message the broker stopped delivering without it being settled (NATS max_deliver reached). */
export type AbandonedHandler = (msg: BrokerMessage, reason: string) => Promise<void>;

export interface BrokerConsumer {
  /** Starts consuming; resolves once subscribed. */
  start(handler: MessageHandler, abandoned?: AbandonedHandler): Promise<void>;
  /** Stops taking messages and waits for the in-flight handlers. */
  stop(): Promise<void>;
  /**
   * Throws when the broker is unreachable or the consumer is stuck (messages waiting, none
   * settled); may resolve to a string the health answer shows (NATS partitions: which it owns).
   */
  healthy(): Promise<unknown>;
}

export interface BrokerPublisher {
  publish(topic: string, message: unknown): Promise<void>;
  close(): Promise<void>;
}
