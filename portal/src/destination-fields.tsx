// Where an endpoint delivers (docs/webhooks/destinations.md): HTTP, a Kafka topic, a NATS
// subject, an AMQP exchange or an SQS queue, and the fields of each. A broker's credential
// is write-only: never prefilled; left blank on edit it keeps the stored one (the API asks
// for it again, naming the field, when the addresses change). An SQS access key has two
// such fields: its id and its secret.
import type { Config, ConfigUser } from "./api";
import type { FormField } from "./field-errors";

type Destination = NonNullable<ConfigUser["destination"]>;
export type DestinationType = Destination["type"];
type Sasl = "" | "plain" | "scram-sha-256" | "scram-sha-512";
type NatsAuth = "" | "token" | "userPassword" | "creds";

/** What the destination part of the form holds (addresses as comma-separated text). */
export interface DestinationInput {
  type: DestinationType;
  brokers: string;
  topic: string;
  ssl: boolean;
  sasl: Sasl;
  saslUsername: string;
  servers: string;
  subject: string;
  jetstream: boolean;
  natsAuth: NatsAuth;
  natsUsername: string;
  url: string;
  exchange: string;
  routingKey: string;
  queueUrl: string;
  region: string;
  /** The SQS access key's id typed (write-only, as the credential). */
  accessKeyId: string;
  /** The credential typed (SASL password, NATS token, password or creds, AMQP password, SQS secret access key). */
  credential: string;
}

const list = (text: string) =>
  text
    .split(",")
    .map((s) => s.trim())
    .filter(Boolean);

/** The form's values for a stored config's destination (HTTP when it has none). */
export function destinationInputOf(d: Config["destination"]): DestinationInput {
  return {
    type: (d?.type as DestinationType | undefined) ?? "http",
    brokers: (d?.brokers ?? []).join(", "),
    topic: d?.topic ?? "",
    ssl: d?.ssl ?? false,
    sasl: (d?.sasl?.mechanism as Sasl | undefined) ?? "",
    saslUsername: d?.sasl?.username ?? "",
    servers: (d?.servers ?? []).join(", "),
    subject: d?.subject ?? "",
    jetstream: d?.jetstream ?? true,
    natsAuth: (d?.auth?.kind as NatsAuth | undefined) ?? "",
    natsUsername: d?.auth?.username ?? "",
    url: d?.url ?? "",
    exchange: d?.exchange ?? "",
    routingKey: d?.routingKey ?? "",
    queueUrl: d?.queueUrl ?? "",
    region: d?.region ?? "",
    accessKeyId: "",
    credential: "",
  };
}

/** A text field as sent: left out when blank, so the API names it as missing. */
const given = <K extends string>(key: K, text: string): { [k in K]?: string } =>
  text.trim() === "" ? {} : ({ [key]: text.trim() } as { [k in K]: string });

/** An address list as sent: left out when empty. */
const givenList = <K extends string>(key: K, text: string): { [k in K]?: string[] } =>
  list(text).length === 0 ? {} : ({ [key]: list(text) } as { [k in K]: string[] });

/** The destination to write: undefined for HTTP unless the stored config had another one. */
export function destinationOfInput(
  f: DestinationInput,
  stored: Config["destination"],
): Destination | undefined {
  const secret = f.credential !== "" ? f.credential : undefined;
  switch (f.type) {
    case "http":
      return stored ? { type: "http" } : undefined;
    case "kafka":
      return {
        type: "kafka",
        ...givenList("brokers", f.brokers),
        ...given("topic", f.topic),
        ...(f.ssl ? { ssl: true } : {}),
        ...(f.sasl
          ? { sasl: { mechanism: f.sasl, username: f.saslUsername, ...(secret ? { password: secret } : {}) } }
          : {}),
      };
    case "nats": {
      const key = f.natsAuth === "userPassword" ? "password" : f.natsAuth;
      return {
        type: "nats",
        ...givenList("servers", f.servers),
        ...given("subject", f.subject),
        jetstream: f.jetstream,
        ...(f.natsAuth
          ? {
              auth: {
                kind: f.natsAuth,
                ...(f.natsAuth === "userPassword" ? { username: f.natsUsername } : {}),
                ...(secret && key ? { [key]: secret } : {}),
              },
            }
          : {}),
      };
    }
    case "amqp":
      return {
        type: "amqp",
        ...given("url", f.url),
        exchange: f.exchange.trim(),
        ...given("routingKey", f.routingKey),
        ...(secret ? { password: secret } : {}),
      };
    case "sqs":
      return {
        type: "sqs",
        ...given("queueUrl", f.queueUrl),
        ...given("region", f.region),
        ...given("accessKeyId", f.accessKeyId),
        ...(secret ? { secretAccessKey: secret } : {}),
      };
  }
}

/** The label of the credential a destination takes, or undefined when it takes none. */
function credentialLabel(f: DestinationInput): string | undefined {
  if (f.type === "kafka" && f.sasl) return "SASL password";
  if (f.type === "nats" && f.natsAuth === "token") return "Token";
  if (f.type === "nats" && f.natsAuth === "userPassword") return "Password";
  if (f.type === "nats" && f.natsAuth === "creds") return "Credentials file (.creds content)";
  if (f.type === "amqp") return "Password (for the URL's user)";
  if (f.type === "sqs") return "Secret access key";
  return undefined;
}

interface FieldProps {
  value: DestinationInput;
  set: (patch: Partial<DestinationInput>) => void;
  error: (field: FormField) => preact.JSX.Element | null;
}

function Text({
  id,
  label,
  field,
  value,
  placeholder,
  onInput,
}: {
  id: string;
  label: string;
  field: keyof DestinationInput;
  value: string;
  placeholder?: string;
  onInput: (patch: Partial<DestinationInput>) => void;
}) {
  return (
    <>
      <label for={id}>{label}</label>
      <input
        id={id}
        type="text"
        placeholder={placeholder}
        value={value}
        onInput={(e) => onInput({ [field]: e.currentTarget.value })}
      />
    </>
  );
}

function KafkaFields({ value, set }: FieldProps) {
  return (
    <>
      <Text
        id="dest-brokers"
        label="Brokers (host:port, comma-separated)"
        field="brokers"
        value={value.brokers}
        placeholder="kafka-1.internal:9092"
        onInput={set}
      />
      <Text id="dest-topic" label="Topic" field="topic" value={value.topic} onInput={set} />
      <label class="checkbox">
        <input type="checkbox" checked={value.ssl} onChange={(e) => set({ ssl: e.currentTarget.checked })} />{" "}
        TLS
      </label>
      <label for="dest-sasl">SASL</label>
      <select
        id="dest-sasl"
        value={value.sasl}
        onChange={(e) => set({ sasl: e.currentTarget.value as Sasl })}
      >
        <option value="">None</option>
        <option value="plain">PLAIN</option>
        <option value="scram-sha-256">SCRAM-SHA-256</option>
        <option value="scram-sha-512">SCRAM-SHA-512</option>
      </select>
      {value.sasl ? (
        <Text
          id="dest-sasl-username"
          label="SASL username"
          field="saslUsername"
          value={value.saslUsername}
          onInput={set}
        />
      ) : null}
    </>
  );
}

function NatsFields({ value, set }: FieldProps) {
  return (
    <>
      <Text
        id="dest-servers"
        label="Servers (comma-separated)"
        field="servers"
        value={value.servers}
        placeholder="nats://nats.internal:4222"
        onInput={set}
      />
      <Text id="dest-subject" label="Subject" field="subject" value={value.subject} onInput={set} />
      <label class="checkbox">
        <input
          type="checkbox"
          checked={value.jetstream}
          onChange={(e) => set({ jetstream: e.currentTarget.checked })}
        />{" "}
        JetStream (wait for the stream's acknowledgement)
      </label>
      <label for="dest-nats-auth">Authentication</label>
      <select
        id="dest-nats-auth"
        value={value.natsAuth}
        onChange={(e) => set({ natsAuth: e.currentTarget.value as NatsAuth })}
      >
        <option value="">None</option>
        <option value="token">Token</option>
        <option value="userPassword">User and password</option>
        <option value="creds">Credentials file</option>
      </select>
      {value.natsAuth === "userPassword" ? (
        <Text
          id="dest-nats-username"
          label="User"
          field="natsUsername"
          value={value.natsUsername}
          onInput={set}
        />
      ) : null}
    </>
  );
}

function AmqpFields({ value, set }: FieldProps) {
  return (
    <>
      <Text
        id="dest-url"
        label="URL (amqp://user@host:5672/vhost, no password)"
        field="url"
        value={value.url}
        onInput={set}
      />
      <Text
        id="dest-exchange"
        label="Exchange (blank: the default exchange)"
        field="exchange"
        value={value.exchange}
        onInput={set}
      />
      <Text
        id="dest-routing-key"
        label="Routing key"
        field="routingKey"
        value={value.routingKey}
        onInput={set}
      />
    </>
  );
}

/** A write-only input: never prefilled; "unchanged" says that blank keeps the stored value. */
function WriteOnly({
  id,
  field,
  secret,
  stored,
  value,
  set,
}: {
  id: string;
  field: "credential" | "accessKeyId";
  /** Masked as typed (a password, a secret key). */
  secret?: boolean;
  stored: boolean;
  value: DestinationInput;
  set: FieldProps["set"];
}) {
  const common = {
    id,
    autocomplete: "off",
    placeholder: stored ? "unchanged" : "",
    value: value[field],
    onInput: (e: preact.TargetedInputEvent<HTMLInputElement>) => set({ [field]: e.currentTarget.value }),
  };
  return secret ? <input type="password" {...common} /> : <input type="text" {...common} />;
}

/** The queue URL, its region, and the access key's id, which is write-only like the credential (never prefilled; blank on edit keeps the stored one). */
function SqsFields({ value, set, storedCredential }: FieldProps & { storedCredential: boolean }) {
  return (
    <>
      <Text
        id="dest-queue-url"
        label="Queue URL (a name ending in .fifo: a FIFO queue)"
        field="queueUrl"
        value={value.queueUrl}
        placeholder="https://sqs.eu-west-1.amazonaws.com/123456789012/orders"
        onInput={set}
      />
      <Text
        id="dest-region"
        label="Region (blank: from the queue URL's host, else us-east-1)"
        field="region"
        value={value.region}
        onInput={set}
      />
      <label for="dest-access-key-id">Access key ID</label>
      <WriteOnly
        id="dest-access-key-id"
        field="accessKeyId"
        stored={storedCredential}
        value={value}
        set={set}
      />
    </>
  );
}

/** The destination select and the fields of the chosen type. */
export function DestinationFields({
  value,
  set,
  storedCredential,
  error,
}: FieldProps & {
  /** The stored config has a credential of this kind: a blank field keeps it. */
  storedCredential: boolean;
}) {
  const credential = credentialLabel(value);
  return (
    <fieldset>
      <legend>Destination</legend>
      <label for="dest-type">Deliver to</label>
      <select
        id="dest-type"
        value={value.type}
        onChange={(e) => set({ type: e.currentTarget.value as DestinationType })}
      >
        <option value="http">HTTP endpoint (POST)</option>
        <option value="kafka">Kafka topic</option>
        <option value="nats">NATS subject</option>
        <option value="amqp">AMQP exchange (RabbitMQ)</option>
        <option value="sqs">SQS queue</option>
      </select>
      {value.type === "kafka" ? <KafkaFields value={value} set={set} error={error} /> : null}
      {value.type === "nats" ? <NatsFields value={value} set={set} error={error} /> : null}
      {value.type === "amqp" ? <AmqpFields value={value} set={set} error={error} /> : null}
      {value.type === "sqs" ? (
        <SqsFields value={value} set={set} error={error} storedCredential={storedCredential} />
      ) : null}
      {credential ? (
        <>
          <label for="dest-credential">{credential}</label>
          {value.natsAuth === "creds" && value.type === "nats" ? (
            <textarea
              id="dest-credential"
              rows={4}
              autocomplete="off"
              placeholder={storedCredential ? "unchanged" : ""}
              value={value.credential}
              onInput={(e) => set({ credential: e.currentTarget.value })}
            />
          ) : (
            <WriteOnly
              id="dest-credential"
              field="credential"
              secret
              stored={storedCredential}
              value={value}
              set={set}
            />
          )}
          <p class="muted small">Write-only: never shown again; sealed at rest.</p>
        </>
      ) : null}
      {value.type !== "http" ? (
        <p class="muted small">
          Each event arrives as one message with the same body and signed headers as an HTTP delivery.
        </p>
      ) : null}
      {error("destination")}
    </fieldset>
  );
}
