import type { AttemptExchange } from "../activities/attempt-exchange.js";
import { fromDbStatus } from "../activities/attempts-store.js";
import { batchOf } from "../core/batching.js";
import { orderingOf } from "../core/ordering.js";
import type { Attempt, Config, UnsentDelivery } from "../generated/prisma/client.js";

// JSON shapes of the API (camelCase, as the reference contract names them).

/**
 * What every response shows for a secret, except on creation and rotation (which return
 * the new one) and GET /configs/{id}/secret: the field stays, for clients of the contract.
 */
export const MASKED_SECRET = "********";

/** A config as the API shows it; `clearSecret` only where the secret is meant to be returned. */
export function configJson(c: Config, clearSecret?: string) {
  return {
    id: c.id,
    name: c.name,
    endpoint: c.endpoint,
    // The stored destination is what answers show: it never holds a credential.
    ...(c.destination !== null ? { destination: c.destination } : {}),
    eventTypes: c.eventTypes,
    secret: clearSecret ?? MASKED_SECRET,
    tenantId: c.tenantId,
    ...(c.filter !== null ? { filter: c.filter } : {}),
    ...(orderingOf(c) ? { ordering: orderingOf(c) } : {}),
    ...(batchOf(c) ? { batch: batchOf(c) } : {}),
    ...(c.signatureHeaders !== null ? { signatureHeaders: c.signatureHeaders } : {}),
    ...(c.maxConcurrency !== null ? { maxConcurrency: c.maxConcurrency } : {}),
    ...(c.previousSecretExpiresAt && c.previousSecretExpiresAt > new Date()
      ? { previousSecretExpiresAt: c.previousSecretExpiresAt.toISOString() }
      : {}),
    active: c.active,
    ...(c.deactivatedReason !== null ? { deactivatedReason: c.deactivatedReason } : {}),
    ...(c.deactivatedAt !== null ? { deactivatedAt: c.deactivatedAt.toISOString() } : {}),
    createdAt: c.createdAt.toISOString(),
    updatedAt: c.updatedAt.toISOString(),
  };
}

/** An attempt row with the body of the event it references (rows since events are stored by reference). */
export type AttemptWithEvent = Attempt & { event?: { body: string } | null };

/** Reads attempt rows with what attemptJson needs (Prisma's `include`). */
export const WITH_EVENT_BODY = { event: { select: { body: true } } } as const;

export function attemptJson(a: AttemptWithEvent) {
  return {
    id: a.id,
    webhookID: a.webhookId,
    config: a.config,
    payload: a.payload ?? a.event?.body ?? "",
    statusCode: a.statusCode,
    retryAttempt: a.retryAttempt,
    ...(a.durationMs !== null ? { durationMs: a.durationMs } : {}),
    status: fromDbStatus(a.status),
    ...(a.nextRetryAfter ? { nextRetryAfter: a.nextRetryAfter.toISOString() } : {}),
    ...(a.error ? { error: a.error } : {}),
    ...(a.replayOf ? { replayOf: a.replayOf } : {}),
    ...(a.batchId ? { batchID: a.batchId } : {}),
    ...exchangeJson(a.exchange as AttemptExchange | null),
    createdAt: a.createdAt.toISOString(),
    updatedAt: a.updatedAt.toISOString(),
  };
}

/** An attempt's request headers and answer excerpt, for rows that kept them. */
function exchangeJson(e: AttemptExchange | null) {
  if (!e) return {};
  return { requestHeaders: e.requestHeaders, ...(e.response ? { response: e.response } : {}) };
}

/**
 * A delivery with no attempt yet (GET /webhooks/{id}): `waiting` while its first send waits,
 * with why and until when; `failed` with the reason when it was closed before any send.
 */
export function unsentDeliveryJson(u: UnsentDelivery) {
  const waiting = u.state === "waiting";
  return {
    webhookID: u.webhookId,
    configID: u.configId,
    workflowID: u.workflowId,
    status: waiting ? "waiting" : "failed",
    reason: u.reason,
    attemptCount: 0,
    ...(waiting ? { nextRetryAfter: u.nextTryAt.toISOString() } : {}),
    acceptedAt: u.acceptedAt.toISOString(),
    attempts: [],
  };
}

/** The cursor wrapper of list answers. */
export function cursorJson<T>(data: T[], page?: { pageSize: number; next?: string | undefined }) {
  return {
    cursor: {
      ...(page ? { pageSize: page.pageSize } : {}),
      hasMore: Boolean(page?.next),
      ...(page?.next ? { next: page.next } : {}),
      data,
    },
  };
}
