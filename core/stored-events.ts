import { createHash } from "node:crypto";
import type pg from "pg";
import type { EventMessage } from "./event-message.js";

// Events by reference (table events, migration 20261130000000): an accepted event is
// stored once, under the hash of the body that is sent, and deliveries carry its id. A
// workflow's history then holds a few dozen bytes per send instead of the event, whatever
// its size, and an event fanned out to many configs, redelivered or replayed is one row.

/** What a delivery carries instead of its event. */
export interface EventRef {
  /** "sha256:" + the hex SHA-256 of the body. */
  id: string;
  /** The body's UTF-8 length (for logs and the Web UI; the send reads the bytes). */
  bytes: number;
}

/** An event as stored: the bytes signed and POSTed, and the key its header carries. */
export interface StoredEvent {
  body: string;
  idempotencyKey: string;
}

/** What starting a delivery needs of its event: the reference and what the Web UI shows. */
export interface DeliveryEvent {
  ref: EventRef;
  type: string;
  idempotencyKey: string;
  /** The event's `ordering_key`, when it has one (ordered configs deliver by it). */
  orderingKey?: string;
}

/**
 * How long an event no row references any more is kept (it was accepted but its rows were
 * purged, or its first send has not written one yet). Far past any first send: a delivery
 * whose first send comes later finds no event and closes with that reason.
 */
export const UNREFERENCED_EVENT_MS = 7 * 24 * 3600 * 1000;

/**
 * The body POSTed for an event: its normalised message as JSON, without the tenant it
 * named (routing, not content: the receiver's endpoint is the tenant's own).
 */
export const eventBody = ({ tenant: _, ...event }: EventMessage): string => JSON.stringify(event);

export const eventIdOf = (body: string): string =>
  `sha256:${createHash("sha256").update(body).digest("hex")}`;

/**
 * Stores the event (idempotent) and returns its reference. Accepting an event again
 * refreshes an old row's age, so retention never removes an event a new delivery needs.
 */
export async function storeEvent(pool: pg.Pool, event: EventMessage): Promise<DeliveryEvent> {
  const ref = await storeEventBody(pool, eventBody(event), event.type, event.idempotency_key);
  return {
    ref,
    type: event.type,
    idempotencyKey: event.idempotency_key,
    ...(event.ordering_key !== undefined ? { orderingKey: event.ordering_key } : {}),
  };
}

/** Stores an event's body as it is (rows written before events were stored keep theirs). */
export async function storeEventBody(
  pool: pg.Pool | pg.PoolClient,
  body: string,
  type: string,
  idempotencyKey: string,
): Promise<EventRef> {
  const ref = { id: eventIdOf(body), bytes: Buffer.byteLength(body) };
  await pool.query({
    name: "events-store",
    text: `INSERT INTO events (id, type, idempotency_key, body, bytes) VALUES ($1, $2, $3, $4, $5)
           ON CONFLICT (id) DO UPDATE SET created_at = now()
             WHERE events.created_at < now() - interval '1 hour'`,
    values: [ref.id, type, idempotencyKey, body, ref.bytes],
  });
  return ref;
}

/** The stored event, or null when no row has that id (retention removed it). */
export async function readStoredEvent(pool: pg.Pool, id: string): Promise<StoredEvent | null> {
  const { rows } = await pool.query<StoredEvent>({
    name: "events-read",
    text: `SELECT body, idempotency_key AS "idempotencyKey" FROM events WHERE id = $1`,
    values: [id],
  });
  return rows[0] ?? null;
}

/** The stored events of `ids` by id, in one query (a batch's send); an id retention removed is absent. */
export async function readStoredEvents(pool: pg.Pool, ids: string[]): Promise<Map<string, StoredEvent>> {
  const { rows } = await pool.query<StoredEvent & { id: string }>({
    name: "events-read-many",
    text: `SELECT id, body, idempotency_key AS "idempotencyKey" FROM events WHERE id = ANY($1::text[])`,
    values: [ids],
  });
  return new Map(rows.map(({ id, ...event }) => [id, event]));
}

/**
 * The event of an attempt or unsent row, to start a delivery from it again (replay,
 * recovery, reconciliation): by its reference, or, for a row written before events were
 * stored, stored now from the row's own copy (the same bytes, so the same signature).
 * Null when the row's event is gone or its copy is not an event message.
 */
export async function eventOfRow(
  pool: pg.Pool | pg.PoolClient,
  row: { eventId: string | null; payload: string | null },
): Promise<DeliveryEvent | null> {
  if (row.eventId) {
    const { rows } = await pool.query<{
      type: string;
      idempotencyKey: string;
      bytes: number;
      orderingKey: string | null;
    }>({
      name: "events-describe",
      // The ordering key is in the body (replays and recoveries of ordered configs go by it).
      text: `SELECT type, idempotency_key AS "idempotencyKey", bytes,
               CASE WHEN body LIKE '%"ordering_key"%' THEN body::jsonb ->> 'ordering_key' END AS "orderingKey"
             FROM events WHERE id = $1`,
      values: [row.eventId],
    });
    const e = rows[0];
    return e
      ? {
          ref: { id: row.eventId, bytes: e.bytes },
          type: e.type,
          idempotencyKey: e.idempotencyKey,
          ...(typeof e.orderingKey === "string" ? { orderingKey: e.orderingKey } : {}),
        }
      : null;
  }
  if (row.payload === null) return null;
  let event: Partial<EventMessage> | null;
  try {
    event = JSON.parse(row.payload) as Partial<EventMessage> | null;
  } catch {
    return null;
  }
  if (typeof event?.type !== "string") return null;
  const key = typeof event.idempotency_key === "string" ? event.idempotency_key : "";
  const ref = await storeEventBody(pool, row.payload, event.type, key);
  return {
    ref,
    type: event.type,
    idempotencyKey: key,
    ...(typeof event.ordering_key === "string" ? { orderingKey: event.ordering_key } : {}),
  };
}
