import { defineSearchAttributeKey, SearchAttributeType } from "@temporalio/common";

// Custom search attributes of delivery workflows, so the Temporal Web UI can
// filter deliveries (e.g. `WebhookEventType = "ledger.committed"`). The dev
// server registers them at start; a real cluster needs the command in the README.

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

const CLI_TYPE: Record<string, string> = { KEYWORD: "Keyword", INT: "Int" };

/** `Name=Type` as `temporal server start-dev --search-attribute` and `operator search-attribute create` take it. */
export const searchAttributeCliArgs = (): string[] =>
  SEARCH_ATTRIBUTES.map((k) => `${k.name}=${CLI_TYPE[k.type]}`);
