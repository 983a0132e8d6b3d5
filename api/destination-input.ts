import { isIP } from "node:net";
import type { ConfigSecrets } from "../core/config-secrets.js";
import {
  type BrokerDestination,
  type Destination,
  type DestinationSecret,
  type DestinationType,
  destinationAddresses,
  destinationEndpoint,
  type KafkaSaslMechanism,
  type NatsAuthKind,
  openDestinationSecret,
  sealDestinationSecret,
} from "../core/destinations.js";
import type { EgressPolicy } from "../core/egress-policy.js";
import { plainHttpReason } from "./credential-binding.js";
import { checkEndpoint } from "./endpoint-url.js";
import { validation } from "./errors.js";

// The write shape of a config's destination (api/openapi-destination.ts), checked for what
// the schema cannot say, naming the field: which fields a type takes, addresses, names,
// the egress policy on address literals, and which credential it needs. A credential is
// bound to the addresses it was given for: kept on update while they stay, asked for again
// when they move (as an endpoint's credentials are, api/credential-binding.ts).

export interface DestinationInput {
  type: DestinationType;
  brokers?: string[];
  topic?: string;
  ssl?: boolean;
  sasl?: { mechanism: KafkaSaslMechanism; username: string; password?: string };
  servers?: string[];
  subject?: string;
  jetstream?: boolean;
  auth?: { kind: NatsAuthKind; token?: string; username?: string; password?: string; creds?: string };
  url?: string;
  password?: string;
  exchange?: string;
  routingKey?: string;
  queueUrl?: string;
  region?: string;
  accessKeyId?: string;
  secretAccessKey?: string;
}

/** The destination as it is stored, and the credential given with it (only the fields given). */
export interface ReadDestination {
  destination: Destination;
  given: DestinationSecret;
}

const FIELDS: Record<DestinationInput["type"], readonly (keyof DestinationInput)[]> = {
  http: ["type"],
  kafka: ["type", "brokers", "topic", "ssl", "sasl"],
  nats: ["type", "servers", "subject", "jetstream", "auth"],
  amqp: ["type", "url", "password", "exchange", "routingKey"],
  sqs: ["type", "queueUrl", "region", "accessKeyId", "secretAccessKey"],
};

const KAFKA_TOPIC = /^[A-Za-z0-9._-]{1,249}$/;
/** A NATS subject to publish to: dot-separated tokens, no wildcard, no whitespace. */
const NATS_SUBJECT = /^[^\s.*>]+(\.[^\s.*>]+)*$/;
const AMQP_NAME = /^[A-Za-z0-9_.:-]*$/;
/** The last segment of a queue URL: a queue's name, a FIFO queue's ending in .fifo (80 at most in all). */
const SQS_QUEUE = /^(?=.{1,80}$)[A-Za-z0-9_-]+(\.fifo)?$/;
const SQS_REGION = /^[a-z0-9-]{1,32}$/;
/** The region in an AWS queue URL's host: sqs.<region>.amazonaws.com (and .amazonaws.com.cn). */
const AWS_SQS_HOST = /^sqs\.([a-z0-9-]+)\.amazonaws\.com(\.cn)?$/;
/** The region requests are signed for when neither the field nor the host gives one. */
export const DEFAULT_SQS_REGION = "us-east-1";
const HOST_PORT = /^(\[[0-9A-Fa-f:.]+\]|[A-Za-z0-9.-]+):(\d{1,5})$/;

const required = <T>(field: string, value: T | undefined): T => {
  if (value === undefined) throw validation(`missing required field "${field}"`);
  return value;
};

/** An address literal the egress policy denies is refused now; a name is checked as each send resolves it. */
function checkHost(field: string, host: string, egress: EgressPolicy): void {
  const bare = host.replace(/^\[|\]$/g, "");
  const denied = isIP(bare) ? egress.reason(bare) : undefined;
  if (denied) throw validation(`${field} is refused by the egress policy: ${denied}`);
}

function hostPort(field: string, text: string, egress: EgressPolicy): string {
  const m = HOST_PORT.exec(text);
  const port = Number(m?.[2]);
  if (!m || port < 1 || port > 65535)
    throw validation(
      `${field} must be host:port (e.g. kafka-1.internal:9092), got ${JSON.stringify(text.slice(0, 300))}`,
    );
  checkHost(field, m[1]!, egress);
  return text;
}

/** A URL of one of `schemes`, without a password, with its port made explicit. */
function brokerUrl(field: string, text: string, schemes: Record<string, number>, egress: EgressPolicy): URL {
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    throw validation(
      `${field} must be a URL such as ${Object.keys(schemes)[0]}//host:port, got ${JSON.stringify(text.slice(0, 300))}`,
    );
  }
  const port = schemes[url.protocol];
  if (port === undefined)
    throw validation(
      `${field} must use ${Object.keys(schemes)
        .map((s) => s.slice(0, -1))
        .join(" or ")}, got ${JSON.stringify(url.protocol.slice(0, -1))}`,
    );
  if (!url.hostname) throw validation(`${field} must name a host`);
  if (url.password)
    throw validation(`${field} must not carry a password (give it in its own field: it is sealed)`);
  if (url.search || url.hash) throw validation(`${field} must not have a query or fragment`);
  if (!url.port) url.port = String(port);
  checkHost(field, url.hostname, egress);
  return url;
}

/** brokerUrl of a field the destination requires: absent, a 400 naming it. */
const requiredUrl = (
  field: string,
  text: string | undefined,
  schemes: Record<string, number>,
  egress: EgressPolicy,
) => brokerUrl(field, required(field, text), schemes, egress);

function readKafka(d: DestinationInput, egress: EgressPolicy): ReadDestination {
  const brokers = required("destination.brokers", d.brokers).map((b, i) =>
    hostPort(`destination.brokers[${i}]`, b, egress),
  );
  const topic = required("destination.topic", d.topic);
  if (!KAFKA_TOPIC.test(topic) || topic === "." || topic === "..")
    throw validation(
      `destination.topic must be a Kafka topic name (letters, digits, . _ -; at most 249), got ${JSON.stringify(topic)}`,
    );
  return {
    destination: {
      type: "kafka",
      brokers,
      topic,
      ...(d.ssl ? { ssl: true } : {}),
      ...(d.sasl ? { sasl: { mechanism: d.sasl.mechanism, username: d.sasl.username } } : {}),
    },
    given: d.sasl?.password !== undefined ? { password: d.sasl.password } : {},
  };
}

function readNats(d: DestinationInput, egress: EgressPolicy): ReadDestination {
  const servers = required("destination.servers", d.servers).map((s, i) => {
    const url = brokerUrl(`destination.servers[${i}]`, s, { "nats:": 4222 }, egress);
    if (url.username)
      throw validation(
        `destination.servers[${i}] must not carry credentials (give them in destination.auth)`,
      );
    return `nats://${url.host}`;
  });
  const subject = required("destination.subject", d.subject);
  if (!NATS_SUBJECT.test(subject))
    throw validation(
      `destination.subject must be a NATS subject without wildcards (tokens separated by dots, no spaces, * or >), got ${JSON.stringify(subject)}`,
    );
  const auth = d.auth;
  const given: DestinationSecret = {};
  if (auth) {
    const allowed = { token: ["token"], userPassword: ["username", "password"], creds: ["creds"] }[auth.kind];
    for (const f of ["token", "username", "password", "creds"] as const)
      if (auth[f] !== undefined && !allowed.includes(f))
        throw validation(`destination.auth.${f} does not apply to auth kind ${auth.kind}`);
    if (auth.kind === "userPassword") required("destination.auth.username", auth.username);
    if (auth.token !== undefined) given.token = auth.token;
    if (auth.password !== undefined) given.password = auth.password;
    if (auth.creds !== undefined) given.creds = auth.creds;
  }
  return {
    destination: {
      type: "nats",
      servers,
      subject,
      jetstream: d.jetstream ?? true,
      ...(auth
        ? { auth: { kind: auth.kind, ...(auth.username !== undefined ? { username: auth.username } : {}) } }
        : {}),
    },
    given,
  };
}

function readAmqp(d: DestinationInput, egress: EgressPolicy): ReadDestination {
  const url = requiredUrl("destination.url", d.url, { "amqp:": 5672, "amqps:": 5671 }, egress);
  const exchange = d.exchange ?? "";
  const routingKey = d.routingKey ?? "";
  if (!AMQP_NAME.test(exchange))
    throw validation(
      `destination.exchange must be an exchange name (letters, digits, - _ . :), got ${JSON.stringify(exchange)}`,
    );
  if (exchange === "" && routingKey === "")
    throw validation(
      'missing required field "destination.routingKey" (with the default exchange it names the queue)',
    );
  if (d.password !== undefined && !url.username)
    throw validation("destination.password needs a user in destination.url (amqp://user@host)");
  return {
    destination: { type: "amqp", url: url.toString(), exchange, routingKey },
    given: d.password !== undefined ? { password: d.password } : {},
  };
}

function readSqs(d: DestinationInput, egress: EgressPolicy): ReadDestination {
  const url = requiredUrl("destination.queueUrl", d.queueUrl, { "https:": 443, "http:": 80 }, egress);
  if (url.username)
    throw validation(
      "destination.queueUrl must not carry credentials (give them in destination.accessKeyId and destination.secretAccessKey)",
    );
  const segments = url.pathname.split("/").slice(1);
  const queue = segments.at(-1) ?? "";
  if (segments.length < 2 || segments.some((s) => s === "") || !SQS_QUEUE.test(queue))
    throw validation(
      `destination.queueUrl must end with /<account>/<queue name> (letters, digits, - _, a FIFO queue's ending in .fifo; 80 at most), e.g. https://sqs.eu-west-1.amazonaws.com/123456789012/orders, got ${JSON.stringify(url.pathname.slice(0, 300))}`,
    );
  const region = d.region ?? AWS_SQS_HOST.exec(url.hostname)?.[1] ?? DEFAULT_SQS_REGION;
  if (!SQS_REGION.test(region))
    throw validation(
      `destination.region must be a region name such as eu-west-1, got ${JSON.stringify(region.slice(0, 100))}`,
    );
  const given: DestinationSecret = {};
  if (d.accessKeyId !== undefined) given.accessKeyId = d.accessKeyId;
  if (d.secretAccessKey !== undefined) given.secretAccessKey = d.secretAccessKey;
  return { destination: { type: "sqs", queueUrl: url.toString(), region }, given };
}

/** The destination checked and normalised (ports explicit, defaults filled in), or a 400 naming the field. */
export function readDestination(d: DestinationInput, egress: EgressPolicy): ReadDestination {
  for (const key of Object.keys(d) as (keyof DestinationInput)[])
    if (!FIELDS[d.type].includes(key))
      throw validation(`destination.${key} does not apply to a ${d.type} destination`);
  switch (d.type) {
    case "http":
      return { destination: { type: "http" }, given: {} };
    case "kafka":
      return readKafka(d, egress);
    case "nats":
      return readNats(d, egress);
    case "amqp":
      return readAmqp(d, egress);
    case "sqs":
      return readSqs(d, egress);
  }
}

/**
 * The endpoint stored with the destination: the one given for HTTP (required, checked);
 * for a broker, the one derived from it, which a body may give back unchanged (a GET's
 * answer sent back as an update) but not otherwise.
 */
export function endpointFor(
  destination: Destination,
  endpoint: string | undefined,
  egress: EgressPolicy,
): string {
  if (destination.type === "http") return checkEndpoint(required("endpoint", endpoint), egress);
  const derived = destinationEndpoint(destination);
  if (endpoint !== undefined && endpoint !== derived)
    throw validation(
      `endpoint: a ${destination.type} destination's endpoint is derived from it (${derived}); leave endpoint out, or set destination {"type":"http"} to deliver over HTTP`,
    );
  return derived;
}

interface NeededCredential {
  key: keyof DestinationSecret;
  field: string;
}

/** Which credentials a destination needs (none, one, or an SQS key's two parts), and the fields that give them. */
function neededCredentials(d: Destination): NeededCredential[] {
  const one = (key: keyof DestinationSecret, field: string) => [{ key, field }];
  switch (d.type) {
    case "kafka":
      return d.sasl ? one("password", "destination.sasl.password") : [];
    case "nats":
      if (d.auth?.kind === "token") return one("token", "destination.auth.token");
      if (d.auth?.kind === "userPassword") return one("password", "destination.auth.password");
      if (d.auth?.kind === "creds") return one("creds", "destination.auth.creds");
      return [];
    case "amqp":
      return new URL(d.url).username ? one("password", "destination.password") : [];
    case "sqs":
      // Always its own key: never the process's ambient AWS credentials.
      return [
        { key: "accessKeyId", field: "destination.accessKeyId" },
        { key: "secretAccessKey", field: "destination.secretAccessKey" },
      ];
    default:
      return [];
  }
}

/**
 * Whether the credential crosses the connection as it is (no TLS, and a mechanism that sends
 * it). An SQS secret access key never does: requests are signed with it (SigV4), as SCRAM does.
 */
function sentInClear(d: Destination): string | undefined {
  if (d.type === "kafka" && d.sasl?.mechanism === "plain" && !d.ssl)
    return "set ssl, or use scram-sha-256 or scram-sha-512";
  if (d.type === "nats" && (d.auth?.kind === "token" || d.auth?.kind === "userPassword"))
    return "NATS destinations connect without TLS: use auth kind creds (its seed never leaves this process)";
  if (d.type === "amqp" && new URL(d.url).protocol === "amqp:") return "use amqps://";
  return undefined;
}

/**
 * As over plain http:// (api/credential-binding.ts), a credential is not sent in clear over
 * a plaintext connection, except to loopback while the egress policy allows it.
 */
function checkNotInClear(d: BrokerDestination, field: string, egress: EgressPolicy): void {
  const fix = sentInClear(d);
  if (!fix) return;
  for (const address of destinationAddresses(d))
    if (plainHttpReason(`http://${address}`, egress))
      throw validation(
        `${field}: the credential would cross a plaintext connection to ${address} (only loopback is excepted, while the egress policy allows it): ${fix}`,
      );
}

const sameAddresses = (a: Destination, b: Destination) =>
  a.type === b.type &&
  a.type !== "http" &&
  JSON.stringify(destinationAddresses(a)) === JSON.stringify(destinationAddresses(b as BrokerDestination));

/**
 * The sealed credential to store with `next`: the one given, else the stored one while the
 * addresses stay the same; null when `next` needs none. A 400 names the field when a
 * needed credential is missing (or was set for other addresses).
 */
export function destinationSecretToStore(
  next: ReadDestination,
  before: { destination: Destination; sealed: string | null } | null,
  opts: { configId: string; secrets: ConfigSecrets; egress: EgressPolicy },
): string | null {
  const needed = neededCredentials(next.destination);
  if (needed.length === 0 || next.destination.type === "http") return null;
  checkNotInClear(next.destination, needed[0]!.field, opts.egress);
  let stored: DestinationSecret | undefined;
  const kept = (key: keyof DestinationSecret) => {
    if (!before || !sameAddresses(before.destination, next.destination)) return undefined;
    stored ??= openDestinationSecret(opts.secrets, opts.configId, before.sealed);
    return stored[key];
  };
  const secret: DestinationSecret = {};
  for (const { key, field } of needed) {
    const value = next.given[key] ?? kept(key);
    if (value === undefined)
      throw validation(
        `missing required field "${field}"${
          before && before.destination.type !== "http" && before.sealed !== null
            ? " (a credential stays with the addresses it was given for, and these changed: give it again)"
            : ""
        }`,
      );
    secret[key] = value;
  }
  return sealDestinationSecret(opts.secrets, opts.configId, secret);
}
