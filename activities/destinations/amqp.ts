import { isIP } from "node:net";
import amqp, { type ConfirmChannel, type Message } from "amqplib";
import type { AmqpDestination, DestinationSecret } from "../../core/destinations.js";
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

// An AMQP 0-9-1 exchange (RabbitMQ) as a destination: a confirm channel per config, each
// message persistent and mandatory, counted as sent once the broker confirmed it. A message
// no queue is bound for comes back (basic.return) before its confirmation: that attempt
// fails and is retried, so binding a queue lets the delivery go on. The delivery's headers
// are the message's headers, its id the message-id; the routing key is the config's, the
// same for every ordering key (the key is in svc-webhook-ordering-key), so bindings work
// unchanged and one queue keeps the order the delivery engine sends in.

/** The URL with the sealed password put back, for the client only. */
function urlWithPassword(target: AmqpDestination, secret: DestinationSecret): string {
  const url = new URL(target.url);
  if (secret.password !== undefined) url.password = encodeURIComponent(secret.password);
  return url.toString();
}

/** A connection and confirm channel; rejects (EgressDenied among others) when it cannot connect. */
export async function openAmqp(
  target: AmqpDestination,
  secret: DestinationSecret,
  egress: EgressPolicy,
): Promise<BrokerConnection> {
  const host = new URL(target.url).hostname.replace(/^\[|\]$/g, "");
  // An address literal skips the lookup: checked here; a name is checked as it resolves.
  const denied = isIP(host) ? egress.reason(host) : undefined;
  if (denied) throw new EgressDenied(`egress policy: ${denied}`);
  const connection = await amqp.connect(urlWithPassword(target, secret), {
    lookup: egress.lookup,
    timeout: CONNECT_TIMEOUT_MS,
    clientProperties: { connection_name: "etp-webhooks" },
  });
  // A connection or channel that fails only fails the sends in flight; the next send opens anew.
  connection.on("error", () => undefined);
  let channel: ConfirmChannel;
  try {
    channel = await connection.createConfirmChannel();
  } catch (err) {
    await connection.close().catch(() => undefined);
    throw err;
  }
  channel.on("error", () => undefined);
  const returned = new Set<string>();
  channel.on("return", (m: Message) => {
    if (typeof m.properties.messageId === "string") returned.add(m.properties.messageId);
  });
  return {
    async send(message) {
      const started = Date.now();
      try {
        await within(
          message.timeoutMs,
          `the publish to AMQP exchange ${JSON.stringify(target.exchange)}`,
          new Promise<void>((resolve, reject) => {
            channel.publish(
              target.exchange,
              target.routingKey,
              Buffer.from(message.body),
              {
                persistent: true,
                mandatory: true,
                contentType: "application/json",
                messageId: message.id,
                timestamp: Math.floor(started / 1000),
                headers: headersWithKey(message),
              },
              (err) => (err ? reject(err) : resolve()),
            );
          }),
        );
        if (returned.delete(message.id))
          return notDelivered(
            started,
            `amqp: no queue is bound to exchange ${JSON.stringify(target.exchange)} for routing key ${JSON.stringify(target.routingKey)} (the broker returned the message)`,
          );
        return acknowledged(
          started,
          `amqp ${target.exchange || "(default exchange)"} ${target.routingKey} confirmed`,
        );
      } catch (err) {
        returned.delete(message.id);
        return amqpFailure(started, err as Error);
      }
    },
    close: async () => {
      await channel.close().catch(() => undefined);
      await connection.close();
    },
  };
}

/** A failed publish or connection as an attempt's outcome: retried (an exchange may be declared, a broker restarted). */
export function amqpFailure(started: number, err: Error & { code?: string | number }): SendResult {
  return (
    commonFailure(started, err) ??
    notDelivered(started, `amqp${err.code ? ` ${err.code}` : ""}: ${err.message}`)
  );
}
