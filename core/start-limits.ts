import type { EventMessage } from "./event-message.js";
import { PermanentStartFailure } from "./start-failures.js";

// What a delivery's workflow start may carry. Temporal's limits, as the dev
// server (Temporal 1.32) enforces them and the server documents them:
// - a Keyword search attribute value: at most 2 048 bytes JSON-encoded, checked
//   by the frontend (limit.searchAttributesSizeOfValue); the SQL visibility
//   stores (PostgreSQL, MySQL) keep keywords in VARCHAR(255) columns, so longer
//   values would break visibility there: we keep 255 characters;
// - all search attributes of a workflow: 40 KiB (limit.searchAttributesTotalSize);
//   six values of at most 255 characters stay far below;
// - the static summary: documented at 200 bytes (not enforced by the dev server);
// - one payload: refused above 2 MiB (limit.blobSize.error), warned about above
//   256 KiB. Deliveries carry their event by reference (core/stored-events.ts): an
//   input or activity argument is a few hundred bytes whatever the event's size.
// The event itself is bounded by the product (MAX_EVENT_BYTES), not by Temporal.

export const KEYWORD_MAX_CHARS = 255;
export const SUMMARY_MAX_BYTES = 200;
/**
 * Largest event (normalised, as JSON) a delivery takes: 2 MiB. Twice the largest message
 * NATS and Kafka carry by default (1 MiB), so every event a default broker delivers fits,
 * whatever normalisation adds; POST /events takes the same. Beyond it, a worker would hold
 * more per send in flight (at most --max-concurrent-sends × the bound) for bodies that
 * most receivers' front proxies refuse anyway (1 MiB is a common default). Events are
 * stored once (core/stored-events.ts): the bound no longer weighs on Temporal's history.
 */
export const MAX_EVENT_BYTES = 2 * 1024 * 1024;
/**
 * Deepest nesting of objects and arrays in a payload. Far more than any event
 * we know of, and well inside what every JSON encoder on the path handles
 * (V8's JSON.stringify runs out of stack near 4 000 levels, which is how a
 * 10 000-deep payload failed Temporal's payload converter).
 */
export const MAX_EVENT_DEPTH = 128;

const ELLIPSIS = "…";

/** A Keyword search attribute value: at most KEYWORD_MAX_CHARS characters (code points). */
export function keyword(value: string): string {
  const chars = Array.from(value);
  return chars.length <= KEYWORD_MAX_CHARS
    ? value
    : chars.slice(0, KEYWORD_MAX_CHARS - 1).join("") + ELLIPSIS;
}

/** A static summary: at most SUMMARY_MAX_BYTES of UTF-8, cut on a character boundary. */
export function summary(text: string): string {
  if (Buffer.byteLength(text) <= SUMMARY_MAX_BYTES) return text;
  const room = SUMMARY_MAX_BYTES - Buffer.byteLength(ELLIPSIS);
  let bytes = 0;
  let kept = "";
  for (const ch of text) {
    bytes += Buffer.byteLength(ch);
    if (bytes > room) break;
    kept += ch;
  }
  return kept + ELLIPSIS;
}

/** How deeply objects and arrays nest in `value` (a scalar is 0), without recursion. */
export function nestingDepth(value: unknown): number {
  let deepest = 0;
  const pending: [unknown, number][] = [[value, 1]];
  while (pending.length > 0) {
    const [v, depth] = pending.pop()!;
    if (v === null || typeof v !== "object") continue;
    deepest = Math.max(deepest, depth);
    for (const child of Object.values(v)) pending.push([child, depth + 1]);
  }
  return deepest;
}

/** Throws a PermanentStartFailure naming the bound when the event cannot be a delivery's input. */
export function checkEventBounds(event: EventMessage): void {
  const depth = nestingDepth(event.payload);
  if (depth > MAX_EVENT_DEPTH) {
    throw new PermanentStartFailure(
      `the event's payload nests ${depth} levels deep; deliveries take at most ${MAX_EVENT_DEPTH} (MAX_EVENT_DEPTH)`,
      "event",
    );
  }
  const bytes = Buffer.byteLength(JSON.stringify(event));
  if (bytes > MAX_EVENT_BYTES) {
    throw new PermanentStartFailure(
      `the event is ${bytes} bytes as JSON; deliveries take at most ${MAX_EVENT_BYTES} (MAX_EVENT_BYTES, 2 MiB)`,
      "event",
    );
  }
}
