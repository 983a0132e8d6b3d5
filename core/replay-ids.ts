import { createHash } from "node:crypto";

/**
 * The workflow id of a replay of `webhookId` under the caller's idempotency key: one
 * replay per webhook and key, whether it comes from POST /webhooks/{id}/replay or a
 * bulk recovery (the same key through both starts one delivery).
 */
export function replayWorkflowId(webhookId: string, idempotencyKey: string): string {
  const keyHash = createHash("sha256").update(idempotencyKey).digest("hex").slice(0, 24);
  return `replay:${webhookId}:${keyHash}`;
}
