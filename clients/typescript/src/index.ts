// The package's entry point: the generated client with auth and retries, paging, errors
// and the webhook verifier.
export { createWebhooksClient, type WebhooksClient, type WebhooksClientOptions } from "./client.js";
export { ApiError, type CallResult, unwrap } from "./errors.js";
export type { components, operations, paths } from "./generated/openapi.js";
export { type CursorPage, paginate } from "./paging.js";
export {
  DEFAULT_RETRY_POLICY,
  RETRIED_STATUSES,
  type RetryPolicy,
  retryAfterMs,
  retryingFetch,
} from "./retry.js";
export {
  type VerificationFailure,
  type VerifiedWebhook,
  type VerifyOptions,
  verifyWebhook,
  type WebhookHeaders,
  WebhookVerificationError,
} from "./webhook.js";
