import { type DestinationSecret, destinationOf } from "../core/destinations.js";
import type { EgressPolicy } from "../core/egress-policy.js";
import type { EndpointAuth } from "../core/endpoint-auth-rows.js";
import { orderingKeyOf, orderingOf } from "../core/ordering.js";
import type { Config } from "../generated/prisma/client.js";
import { type DeliveryHeaderFields, deliveryHeaders } from "./delivery-headers.js";
import type { BrokerConnections } from "./destinations/connections.js";
import type { SendResult } from "./destinations/message.js";
import { sendWithEndpointAuth } from "./endpoint-auth-send.js";
import type { OAuthTokens } from "./oauth-tokens.js";

// The one place a send picks its destination (docs/webhooks/destinations.md): the signed
// POST to the config's endpoint (activities/http-send.ts), or one message to its Kafka
// topic, NATS subject, AMQP exchange or SQS queue (activities/destinations/) carrying the
// same body and the same signed headers. Deliveries (activities/send-post.ts) and test
// deliveries (api/test-delivery.ts) both come through here.

/** What a send reaches its destination with: the process's OAuth tokens and broker connections, under the egress policy. */
export interface DestinationClients {
  egress: EgressPolicy;
  oauthTokens: OAuthTokens;
  brokers: BrokerConnections;
}

/** One send's content: what its headers are made of, its timeout, and the bodies of its events (for the ordering key). */
export interface DestinationSend extends DeliveryHeaderFields {
  timeoutMs: number;
  /** Each event's body (one for a delivery, several for a batch). */
  eventBodies: readonly string[];
}

/** The config's credentials, opened: its endpoint's auth (HTTP) or its broker destination's secret. */
export interface OpenedCredentials {
  auth: EndpointAuth | null;
  secret: DestinationSecret;
}

export async function sendToDestination(
  clients: DestinationClients,
  config: Config,
  credentials: OpenedCredentials,
  send: DestinationSend,
): Promise<SendResult> {
  const destination = destinationOf(config);
  if (destination.type === "http") {
    const { eventBodies: _, ...request } = send;
    return sendWithEndpointAuth(
      { ...request, endpoint: config.endpoint, egress: clients.egress },
      credentials.auth,
      config.id,
      clients.oauthTokens,
    );
  }
  const headers = {
    "content-type": "application/json",
    ...deliveryHeaders(send, Math.floor(Date.now() / 1000)),
  };
  return clients.brokers.send(
    { configId: config.id, destination, secret: credentials.secret },
    {
      id: send.webhookId,
      body: send.body,
      headers,
      key: messageKey(config, send.eventBodies),
      timeoutMs: send.timeoutMs,
    },
  );
}

/**
 * A message's ordering key: the events' `ordering_key` when they share one (a batch of an
 * ordered config's key does); for an ordered config's event without one, the config id,
 * the key its deliveries are ordered under (core/ordering.ts). Absent otherwise.
 */
export function messageKey(config: Config, bodies: readonly string[]): string | undefined {
  const ordered = orderingOf(config) !== null;
  const keys = new Set(
    bodies.map((b) => orderingKeyIn(b)).map((k) => (ordered ? orderingKeyOf(config.id, k) : k)),
  );
  if (keys.size !== 1) return undefined;
  return [...keys][0];
}

/** The `ordering_key` of an event's body; parsed only when the body names one. */
function orderingKeyIn(body: string): string | undefined {
  if (!body.includes('"ordering_key"')) return undefined;
  try {
    const key = (JSON.parse(body) as { ordering_key?: unknown }).ordering_key;
    return typeof key === "string" ? key : undefined;
  } catch {
    return undefined;
  }
}
