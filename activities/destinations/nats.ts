import { type ConnectionOptions, connect, credsAuthenticator, headers as natsHeaders } from "nats";
import type { DestinationSecret, NatsDestination } from "../../core/destinations.js";
import type { EgressPolicy } from "../../core/egress-policy.js";
import { allowedAddresses, splitHostPort } from "./egress.js";
import {
  acknowledged,
  type BrokerConnection,
  CONNECT_TIMEOUT_MS,
  commonFailure,
  notDelivered,
  type SendResult,
  within,
} from "./message.js";

// A NATS subject as a destination. With `jetstream` (the default) the message goes to the
// stream that captures the subject and counts as sent once the stream acknowledged it,
// with the delivery's id as Nats-Msg-Id, so a publish retried after a lost acknowledgement
// is dropped as a duplicate within the stream's duplicate window. Without it, a core NATS
// publish counts as sent once the server has it (flushed): nothing is kept for a consumer
// that is not listening. The delivery's headers are NATS headers; the subject is the
// config's, the same for every ordering key (the key is in svc-webhook-ordering-key).

/** The servers as addresses the egress policy allows: the client connects to those only. */
async function checkedServers(egress: EgressPolicy, servers: readonly string[]): Promise<string[]> {
  const out: string[] = [];
  for (const s of servers) {
    const { host, port } = splitHostPort(new URL(s).host);
    for (const ip of await allowedAddresses(egress, host))
      out.push(ip.includes(":") ? `[${ip}]:${port}` : `${ip}:${port}`);
  }
  return out;
}

function authOf(target: NatsDestination, secret: DestinationSecret): Partial<ConnectionOptions> {
  switch (target.auth?.kind) {
    case "token":
      return { token: secret.token ?? "" };
    case "userPassword":
      return { user: target.auth.username ?? "", pass: secret.password ?? "" };
    case "creds":
      return { authenticator: credsAuthenticator(new TextEncoder().encode(secret.creds ?? "")) };
    default:
      return {};
  }
}

/** A connection to the servers (resolved through the egress policy); rejects when none answers. */
export async function openNats(
  target: NatsDestination,
  secret: DestinationSecret,
  egress: EgressPolicy,
): Promise<BrokerConnection> {
  const nc = await connect({
    servers: await checkedServers(egress, target.servers),
    name: "etp-webhooks",
    timeout: CONNECT_TIMEOUT_MS,
    // A lost connection fails the sends in flight; the next send opens a new one.
    reconnect: false,
    // Servers a cluster announces are not checked by the policy: they are not used.
    ignoreClusterUpdates: true,
    ...authOf(target, secret),
  });
  const js = target.jetstream ? nc.jetstream() : undefined;
  return {
    async send(message) {
      const started = Date.now();
      const h = natsHeaders();
      for (const [name, value] of Object.entries(message.headers)) h.set(name, value);
      if (message.key !== undefined) h.set("svc-webhook-ordering-key", message.key);
      const data = new TextEncoder().encode(message.body);
      try {
        if (js) {
          const ack = await within(
            message.timeoutMs,
            `the publish to NATS subject ${target.subject}`,
            js.publish(target.subject, data, { headers: h, msgID: message.id, timeout: message.timeoutMs }),
          );
          return acknowledged(
            started,
            `jetstream ${ack.stream} seq ${ack.seq}${ack.duplicate ? " (duplicate)" : ""}`,
          );
        }
        nc.publish(target.subject, data, { headers: h });
        await within(message.timeoutMs, `the publish to NATS subject ${target.subject}`, nc.flush());
        return acknowledged(started, `nats ${target.subject} flushed`);
      } catch (err) {
        return natsFailure(started, target, err as Error & { code?: string });
      }
    },
    close: () => nc.close(),
  };
}

/** A failed publish or connection as an attempt's outcome: retried, unless the message can never be taken. */
export function natsFailure(
  started: number,
  target: NatsDestination,
  err: Error & { code?: string },
): SendResult {
  const common = commonFailure(started, err);
  if (common) return common;
  if (err.code === "503")
    return notDelivered(
      started,
      `nats: no JetStream stream captures subject ${JSON.stringify(target.subject)} (create one, or set jetstream false for a core NATS publish)`,
    );
  // A message over the server's max_payload is refused whatever the retry.
  const permanent = err.code === "MAX_PAYLOAD_EXCEEDED";
  return notDelivered(started, `nats${err.code ? ` ${err.code}` : ""}: ${err.message}`, permanent);
}
