import type { PrismaClient } from "../common/db/database.js";
import { Prisma } from "../generated/prisma/client.js";
import { DELIVERY_STATUSES } from "./delivery-statuses.js";
import { validation } from "./errors.js";
import { encodeCursor, readPage } from "./paging.js";
import { cursorJson } from "./serialize.js";
import { UUID_RE } from "./validation.js";

// GET /configs/{id}/deliveries: one item per delivery (webhook id) of a config, newest
// first by its last attempt, or by its acceptance while it has none. A delivery's state is
// its newest attempt row (as GET /webhooks/{id} answers); a delivery whose first send
// waited, or was closed before any send, exists only in unsent_deliveries and is listed
// from there until its first attempt row is written.

const DEFAULT_PAGE = 50;
const MAX_EVENT_TYPE = 255;

interface Row {
  webhookId: string;
  status: string;
  eventType: string | null;
  attemptCount: bigint;
  lastStatusCode: number | null;
  at: Date;
  lastAttemptAt: Date | null;
  firstAttemptAt: Date | null;
  acceptedAt: Date | null;
  nextRetryAfter: Date | null;
  reason: string | null;
  replayOf: string | null;
  workflowId: string | null;
}

export interface DeliveryListQuery {
  status?: string;
  eventType?: string;
  pageSize: number;
  after?: { at: Date; id: string };
}

/** The query string checked: a 400 names the parameter at fault. */
export function readDeliveryListQuery(query: Record<string, unknown>): DeliveryListQuery {
  const page = readPage(query, DEFAULT_PAGE)!;
  if (page.after && !UUID_RE.test(page.after.id)) {
    throw validation("cursor is not a value this API returned as `next`");
  }
  const status = query.status as string | undefined;
  if (status !== undefined && !(DELIVERY_STATUSES as readonly string[]).includes(status)) {
    throw validation(`status must be one of ${DELIVERY_STATUSES.join(", ")}; got "${status}"`);
  }
  const rawType = query.eventType as string | undefined;
  // Event types are stored normalised (lower case), as POST /events and the broker keep them.
  const eventType = rawType?.trim().toLowerCase();
  if (eventType !== undefined && (eventType === "" || eventType.length > MAX_EVENT_TYPE)) {
    throw validation(`eventType must be a non-empty event type of at most ${MAX_EVENT_TYPE} characters`);
  }
  return {
    pageSize: page.pageSize,
    ...(page.after ? { after: page.after } : {}),
    ...(status !== undefined ? { status } : {}),
    ...(eventType !== undefined ? { eventType } : {}),
  };
}

export async function listDeliveries(prisma: PrismaClient, configId: string, q: DeliveryListQuery) {
  const take = q.pageSize + 1;
  const statusOf = q.status === undefined ? Prisma.sql`TRUE` : Prisma.sql`d.status = ${q.status}`;
  // A status only one side can have spares the other side's walk: none of its rows can match.
  const sentCan = q.status !== "waiting";
  const unsentCan = q.status === undefined || q.status === "waiting" || q.status === "failed";
  const typeOf = q.eventType === undefined ? Prisma.sql`TRUE` : Prisma.sql`d.event_type = ${q.eventType}`;
  const before = (at: Prisma.Sql, id: Prisma.Sql) =>
    q.after
      ? Prisma.sql`(${at}, ${id}) < (${q.after.at}::timestamptz, ${q.after.id}::uuid)`
      : Prisma.sql`TRUE`;
  // Each branch walks its own (config, time) index newest first and stops after a page;
  // the newest attempt row of a delivery is the one no higher retry_attempt follows.
  const rows = await prisma.$queryRaw<Row[]>`
    WITH sent AS (
      SELECT * FROM (
        SELECT a.webhook_id, a.status::text AS status, coalesce(e.type, a.payload::jsonb ->> 'type') AS event_type,
               a.status_code, a.created_at AS at, a.next_retry_after, a.error, a.replay_of, a.workflow_id
          FROM attempts a LEFT JOIN events e ON e.id = a.event_id
         WHERE ${sentCan} AND a.config_id = ${configId}::uuid
           AND ${before(Prisma.sql`a.created_at`, Prisma.sql`a.webhook_id`)}
           AND NOT EXISTS (SELECT 1 FROM attempts n
                            WHERE n.webhook_id = a.webhook_id AND n.retry_attempt > a.retry_attempt)
      ) d
       WHERE ${statusOf} AND ${typeOf}
       ORDER BY d.at DESC, d.webhook_id DESC
       LIMIT ${take}
    ), unsent AS (
      SELECT * FROM (
        SELECT u.webhook_id, CASE u.state WHEN 'waiting' THEN 'waiting' ELSE 'failed' END AS status,
               coalesce(e.type, u.payload::jsonb ->> 'type') AS event_type, u.accepted_at AS at,
               u.next_try_at, u.state, u.reason, u.replay_of, u.workflow_id
          FROM unsent_deliveries u LEFT JOIN events e ON e.id = u.event_id
         WHERE ${unsentCan} AND u.config_id = ${configId}::uuid AND u.state <> 'sent'
           AND ${before(Prisma.sql`u.accepted_at`, Prisma.sql`u.webhook_id`)}
           AND NOT EXISTS (SELECT 1 FROM attempts a WHERE a.webhook_id = u.webhook_id)
      ) d
       WHERE ${statusOf} AND ${typeOf}
       ORDER BY d.at DESC, d.webhook_id DESC
       LIMIT ${take}
    ), page AS (
      SELECT webhook_id, status, event_type, status_code, at, next_retry_after,
             CASE WHEN status = 'failed' THEN error END AS reason, replay_of, workflow_id, NULL::timestamptz AS accepted_at
        FROM sent
      UNION ALL
      SELECT webhook_id, status, event_type, NULL, at, CASE WHEN state = 'waiting' THEN next_try_at END,
             reason, replay_of, workflow_id, at
        FROM unsent
       ORDER BY at DESC, webhook_id DESC
       LIMIT ${take}
    )
    SELECT p.webhook_id::text AS "webhookId", p.status, p.event_type AS "eventType",
           p.status_code AS "lastStatusCode", p.at, p.next_retry_after AS "nextRetryAfter",
           p.reason, p.replay_of::text AS "replayOf", p.workflow_id AS "workflowId",
           p.accepted_at AS "acceptedAt", c.n AS "attemptCount", c.first AS "firstAttemptAt",
           CASE WHEN c.n > 0 THEN p.at END AS "lastAttemptAt"
      FROM page p
      CROSS JOIN LATERAL (SELECT count(*) AS n, min(created_at) AS first
                            FROM attempts x WHERE x.webhook_id = p.webhook_id) c
     ORDER BY p.at DESC, p.webhook_id DESC`;
  const items = rows.slice(0, q.pageSize);
  const last = items.at(-1);
  const next = rows.length > q.pageSize && last ? encodeCursor(last.at, last.webhookId) : undefined;
  return cursorJson(
    items.map((r) => summaryJson(configId, r)),
    { pageSize: q.pageSize, next },
  );
}

function summaryJson(configId: string, r: Row) {
  const iso = (d: Date | null) => d?.toISOString();
  return {
    webhookID: r.webhookId,
    configID: configId,
    status: r.status,
    ...(r.eventType ? { eventType: r.eventType } : {}),
    attemptCount: Number(r.attemptCount),
    ...(r.lastStatusCode !== null ? { lastStatusCode: r.lastStatusCode } : {}),
    ...(r.firstAttemptAt ? { firstAttemptAt: iso(r.firstAttemptAt) } : {}),
    ...(r.lastAttemptAt ? { lastAttemptAt: iso(r.lastAttemptAt) } : {}),
    ...(r.acceptedAt ? { acceptedAt: iso(r.acceptedAt) } : {}),
    ...(r.nextRetryAfter ? { nextRetryAfter: iso(r.nextRetryAfter) } : {}),
    ...(r.reason ? { reason: r.reason } : {}),
    ...(r.replayOf ? { replayOf: r.replayOf } : {}),
    ...(r.workflowId ? { workflowID: r.workflowId } : {}),
  };
}
