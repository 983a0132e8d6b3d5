import type { ConfigSecrets } from "./config-secrets.js";
import { authContext } from "./endpoint-auth-rows.js";

// Where a config's deliveries go (docs/webhooks/destinations.md): an HTTP endpoint (the
// default, a null `destination` column), or a Kafka topic, a NATS subject, an AMQP
// exchange or an SQS queue. The column holds the public part only; a destination's
// credential (SASL password, NATS token or creds, AMQP password, SQS access key) is sealed
// in config_auth.destination_secret (core/endpoint-auth-rows.ts), so the config row that
// attempt rows copy never holds one.

export const DESTINATION_TYPES = ["http", "kafka", "nats", "amqp", "sqs"] as const;
export type DestinationType = (typeof DESTINATION_TYPES)[number];

export type KafkaSaslMechanism = "plain" | "scram-sha-256" | "scram-sha-512";

export interface KafkaDestination {
  type: "kafka";
  /** host:port of the bootstrap brokers. */
  brokers: string[];
  topic: string;
  /** TLS to the brokers. */
  ssl?: boolean;
  /** SASL mechanism and username; the password is the sealed credential. */
  sasl?: { mechanism: KafkaSaslMechanism; username: string };
}

/** How a NATS destination authenticates; the token, password or creds is the sealed credential. */
export type NatsAuthKind = "token" | "userPassword" | "creds";

export interface NatsDestination {
  type: "nats";
  /** nats://host:port of the servers. */
  servers: string[];
  subject: string;
  /** Publish to a JetStream stream and wait for its acknowledgement (default), else a core NATS publish. */
  jetstream: boolean;
  auth?: { kind: NatsAuthKind; username?: string };
}

export interface AmqpDestination {
  type: "amqp";
  /** amqp(s)://[user@]host[:port][/vhost], never with a password (that is the sealed credential). */
  url: string;
  /** "" is the default exchange (routing key = queue name). */
  exchange: string;
  routingKey: string;
}

export interface SqsDestination {
  type: "sqs";
  /** http(s)://host[:port]/<account>/<queue>; a queue named *.fifo is a FIFO queue. */
  queueUrl: string;
  /** The region requests are signed for. */
  region: string;
}

export type BrokerDestination = KafkaDestination | NatsDestination | AmqpDestination | SqsDestination;
export type Destination = { type: "http" } | BrokerDestination;

/** The credential of a broker destination, as it is sealed (one JSON object). */
export interface DestinationSecret {
  /** Kafka SASL password, NATS user password, AMQP password. */
  password?: string;
  /** NATS token. */
  token?: string;
  /** NATS creds file (JWT and NKey seed). */
  creds?: string;
  /** SQS: the access key's id and secret (requests are signed with them, SigV4). */
  accessKeyId?: string;
  secretAccessKey?: string;
}

const BROKER_TYPES = DESTINATION_TYPES.filter((t) => t !== "http");

/** The config's destination: HTTP when the column is null (every config written before destinations). */
export function destinationOf(config: { destination?: unknown }): Destination {
  const d = config.destination as BrokerDestination | null | undefined;
  return d && (BROKER_TYPES as readonly string[]).includes(d.type) ? d : { type: "http" };
}

export const isBrokerDestination = (d: Destination): d is BrokerDestination => d.type !== "http";

/**
 * The `endpoint` stored for a broker destination: a URL naming its first address and its
 * topic, subject, exchange or queue, so what reads endpoints (lists, the rate limit's per-host
 * descriptor, search attributes, health) keeps working, e.g. kafka://10.0.0.5:9092/orders.
 * An SQS queue's is its queue URL under sqs+http(s)://, never mistaken for an HTTP endpoint.
 */
export function destinationEndpoint(d: BrokerDestination): string {
  const part = encodeURIComponent;
  switch (d.type) {
    case "kafka":
      return `kafka://${d.brokers[0]}/${part(d.topic)}`;
    case "nats":
      return `nats://${new URL(d.servers[0]!).host}/${part(d.subject)}`;
    case "amqp": {
      const u = new URL(d.url);
      return `${u.protocol}//${u.host}${u.pathname === "" ? "/" : u.pathname}?exchange=${part(d.exchange)}&routingKey=${part(d.routingKey)}`;
    }
    case "sqs":
      return `sqs+${d.queueUrl}`;
  }
}

/** The host:port pairs a destination connects to, for the egress policy and credential binding. */
export function destinationAddresses(d: BrokerDestination): string[] {
  switch (d.type) {
    case "kafka":
      return [...d.brokers];
    case "nats":
      return d.servers.map((s) => new URL(s).host);
    case "amqp":
      return [new URL(d.url).host];
    case "sqs": {
      const u = new URL(d.queueUrl);
      return [`${u.hostname}:${u.port || (u.protocol === "https:" ? 443 : 80)}`];
    }
  }
}

/** The destination's credential opened ({} when it has none); throws SealedValueError when its key is missing. */
export function openDestinationSecret(
  secrets: ConfigSecrets,
  configId: string,
  stored: string | null | undefined,
): DestinationSecret {
  if (!stored) return {};
  return JSON.parse(secrets.openIn(authContext(configId, "destination_secret"), stored)) as DestinationSecret;
}

/** The credential sealed for its column of the config's auth row. */
export const sealDestinationSecret = (secrets: ConfigSecrets, configId: string, secret: DestinationSecret) =>
  Object.keys(secret).length === 0
    ? null
    : secrets.sealIn(authContext(configId, "destination_secret"), JSON.stringify(secret));
