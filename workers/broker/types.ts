/** One message taken from a broker; the handler's outcome decides ack or redelivery. */
export interface BrokerMessage {
  topic: string;
  data: Uint8Array;
  /** How many times the broker delivered it (1 the first time). */
  deliveryCount: number;
}

/** Returns normally to acknowledge; throws to have the broker deliver the message again. */
export type MessageHandler = (msg: BrokerMessage) => Promise<void>;

export interface BrokerConsumer {
  /** Starts consuming; resolves once subscribed. */
  start(handler: MessageHandler): Promise<void>;
  /** Stops taking messages and waits for the in-flight handlers. */
  stop(): Promise<void>;
  healthy(): Promise<void>;
}

export interface BrokerPublisher {
  publish(topic: string, message: unknown): Promise<void>;
  close(): Promise<void>;
}
