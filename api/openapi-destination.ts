// The OpenAPI schema of a config's destination (docs/webhooks/destinations.md). One object
// whose `type` says which fields apply: api/destination-input.ts checks the per-type
// required and forbidden fields, naming each (a oneOf would answer an error about the
// wrong branch). Credentials have no pattern: an error message would quote the value.

const ADDRESSES = (what: string, example: string) => ({
  type: "array",
  minItems: 1,
  maxItems: 16,
  items: { type: "string", minLength: 1, maxLength: 300 },
  description: `${what}, e.g. ${example}`,
});

const CREDENTIAL = (description: string) => ({
  type: "string",
  minLength: 1,
  maxLength: 8192,
  description: `${description}; sealed at rest, never returned (on update, absent keeps the stored one while the addresses stay the same)`,
});

/** What the caller sends (create and update). */
export const DESTINATION_INPUT = {
  type: "object",
  required: ["type"],
  additionalProperties: false,
  description:
    "where deliveries go: http (the default: POST to endpoint), kafka (a topic), nats (a subject), amqp (an exchange) or sqs (a queue). " +
    "Every destination gets the same body and the same signed headers. For kafka, nats, amqp and sqs, endpoint is derived " +
    "from the destination (leave it out, or give the derived value back); endpoint auth (auth) applies to http only. " +
    "On update, absent keeps the current destination",
  properties: {
    type: { type: "string", enum: ["http", "kafka", "nats", "amqp", "sqs"] },
    brokers: ADDRESSES("kafka: bootstrap brokers host:port", '["kafka-1.internal:9092"]'),
    topic: {
      type: "string",
      minLength: 1,
      maxLength: 249,
      description: "kafka: the topic (it must exist: deliveries never create topics)",
    },
    ssl: { type: "boolean", description: "kafka: TLS to the brokers (default false)" },
    sasl: {
      type: "object",
      additionalProperties: false,
      required: ["mechanism", "username"],
      description: "kafka: SASL authentication",
      properties: {
        mechanism: { type: "string", enum: ["plain", "scram-sha-256", "scram-sha-512"] },
        username: { type: "string", minLength: 1, maxLength: 256 },
        password: CREDENTIAL("the SASL password"),
      },
    },
    servers: ADDRESSES("nats: servers nats://host[:port]", '["nats://nats.internal:4222"]'),
    subject: {
      type: "string",
      minLength: 1,
      maxLength: 255,
      description: "nats: the subject published to (no wildcards)",
    },
    jetstream: {
      type: "boolean",
      description:
        "nats: publish to the JetStream stream capturing the subject and wait for its acknowledgement (default true); false: a core NATS publish, sent once the server has it",
    },
    auth: {
      type: "object",
      additionalProperties: false,
      required: ["kind"],
      description: "nats: authentication (one kind)",
      properties: {
        kind: { type: "string", enum: ["token", "userPassword", "creds"] },
        token: CREDENTIAL("kind token: the token"),
        username: { type: "string", minLength: 1, maxLength: 256, description: "kind userPassword" },
        password: CREDENTIAL("kind userPassword: the password"),
        creds: CREDENTIAL("kind creds: the .creds file's content (JWT and NKey seed)"),
      },
    },
    url: {
      type: "string",
      minLength: 1,
      maxLength: 2048,
      description:
        "amqp: amqp://[user@]host[:port][/vhost] or amqps://..., without a password (give it in password); without a user the broker's guest account is used",
    },
    password: CREDENTIAL("amqp: the password of the URL's user"),
    exchange: {
      type: "string",
      maxLength: 255,
      description:
        'amqp: the exchange ("" or absent: the default exchange, where the routing key names a queue)',
    },
    routingKey: { type: "string", maxLength: 255, description: "amqp: the routing key of every message" },
    queueUrl: {
      type: "string",
      minLength: 1,
      maxLength: 2048,
      description:
        "sqs: the queue's URL, http(s)://host[:port]/<account>/<queue name>, e.g. https://sqs.eu-west-1.amazonaws.com/123456789012/orders; " +
        "a name ending in .fifo is a FIFO queue (ordering key as MessageGroupId, webhook id as MessageDeduplicationId). The queue must exist",
    },
    region: {
      type: "string",
      minLength: 1,
      maxLength: 32,
      description:
        "sqs: the region requests are signed for (default: the one in an sqs.<region>.amazonaws.com host, else us-east-1)",
    },
    accessKeyId: CREDENTIAL("sqs: the access key id requests are signed with"),
    secretAccessKey: CREDENTIAL("sqs: the secret access key requests are signed with"),
  },
} as const;

/** What answers show: the destination as given, without its credentials. */
export const DESTINATION = {
  type: "object",
  required: ["type"],
  description:
    "present for kafka, nats, amqp and sqs destinations (absent: http, to endpoint): the fields given, credentials left out (they are write-only)",
  properties: {
    type: { type: "string", enum: ["kafka", "nats", "amqp", "sqs"] },
    brokers: { type: "array", items: { type: "string" } },
    topic: { type: "string" },
    ssl: { type: "boolean" },
    sasl: {
      type: "object",
      properties: { mechanism: { type: "string" }, username: { type: "string" } },
    },
    servers: { type: "array", items: { type: "string" } },
    subject: { type: "string" },
    jetstream: { type: "boolean" },
    auth: {
      type: "object",
      properties: { kind: { type: "string" }, username: { type: "string" } },
    },
    url: { type: "string" },
    exchange: { type: "string" },
    routingKey: { type: "string" },
    queueUrl: { type: "string" },
    region: { type: "string" },
  },
} as const;
