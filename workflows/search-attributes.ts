import { defineSearchAttributeKey, SearchAttributeType } from "@temporalio/common";

// Custom search attributes of delivery workflows, so the Temporal Web UI can
// filter deliveries (e.g. `WebhookEventType = "ledger.committed"`). The dev
// server registers them at start; a real cluster needs the command in docs/webhooks/production-temporal.md.

export const WebhookConfigId = defineSearchAttributeKey("WebhookConfigId", SearchAttributeType.KEYWORD);
export const WebhookId = defineSearchAttributeKey("WebhookId", SearchAttributeType.KEYWORD);
export const WebhookEventType = defineSearchAttributeKey("WebhookEventType", SearchAttributeType.KEYWORD);
export const WebhookEndpointHost = defineSearchAttributeKey(
  "WebhookEndpointHost",
  SearchAttributeType.KEYWORD,
);
export const WebhookDeliveryStatus = defineSearchAttributeKey(
  "WebhookDeliveryStatus",
  SearchAttributeType.KEYWORD,
);
export const WebhookAttemptCount = defineSearchAttributeKey("WebhookAttemptCount", SearchAttributeType.INT);
/** The tenant owning the delivery's config (the default tenant's nil UUID for most deployments). */
export const WebhookTenantId = defineSearchAttributeKey("WebhookTenantId", SearchAttributeType.KEYWORD);

export const SEARCH_ATTRIBUTES = [
  WebhookConfigId,
  WebhookId,
  WebhookEventType,
  WebhookEndpointHost,
  WebhookDeliveryStatus,
  WebhookAttemptCount,
  WebhookTenantId,
];

/** What a delivery workflow starts with (its first task then keeps status and count current). */
export const deliveryAttributes = (d: {
  configId: string;
  webhookId: string;
  eventType: string;
  endpointHost: string;
  status: string;
  attempts: number;
  tenantId: string;
}) => [
  { key: WebhookConfigId, value: d.configId },
  { key: WebhookId, value: d.webhookId },
  { key: WebhookEventType, value: d.eventType },
  { key: WebhookEndpointHost, value: d.endpointHost },
  { key: WebhookDeliveryStatus, value: d.status },
  { key: WebhookAttemptCount, value: d.attempts },
  { key: WebhookTenantId, value: d.tenantId },
];

const CLI_TYPE: Record<string, string> = { KEYWORD: "Keyword", INT: "Int" };

/** `Name=Type` as `temporal server start-dev --search-attribute` and `operator search-attribute create` take it. */
export const searchAttributeCliArgs = (): string[] =>
  SEARCH_ATTRIBUTES.map((k) => `${k.name}=${CLI_TYPE[k.type]}`);
