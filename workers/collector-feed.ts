// Feeding a batched config's collector (workflows/batch-delivery.ts) by group commit: the
// first event bound for a collector goes at once; the events that arrive while its write
// and signal are in flight wait, and go next as one multi-row INSERT of their waiting rows
// and one signal-with-start carrying them all. A burst then costs one Temporal RPC, one
// workflow task and one INSERT per group instead of per event, without a timer: a lone
// event waits for nothing. Each caller's promise settles with its own group's outcome, so
// an event is acknowledged (HTTP answer, broker ack) only once its row and signal are done.

import type pg from "pg";
import type { UnsentWait } from "../activities/unsent-deliveries.js";
import { recordCollected } from "../activities/unsent-deliveries.js";
import type { BatchItem } from "../workflows/batch-delivery.js";

/** One event on its way to its collector. */
export interface FeedEntry {
  item: BatchItem;
  /** Its waiting row; null for a restart by reconciliation, whose row exists. */
  wait: UnsentWait | null;
}

/** Signals one group to its collector (signal-with-start, the group's items in order). */
export type SendGroup = (items: BatchItem[]) => Promise<void>;

/**
 * Most events in one signal: far under Temporal's payload limit (an item is about 200
 * bytes), and a group rarely reaches it (it is bounded by the requests in flight).
 */
const MAX_GROUP = 500;

interface Waiting extends FeedEntry {
  send: SendGroup;
  settle: (started: boolean) => void;
  fail: (err: unknown) => void;
}

/** Per database, the events waiting per collector id; a collector with an entry has a group in flight. */
const feeds = new WeakMap<pg.Pool, Map<string, Waiting[]>>();

/**
 * Adds the event to its collector's next signal: resolves once its waiting row is written
 * (true when this inserted it, false for a delivery accepted before) and the signal that
 * carries it was accepted by Temporal; rejects when either failed.
 */
export function feedCollector(
  pool: pg.Pool,
  collectorId: string,
  entry: FeedEntry,
  send: SendGroup,
): Promise<boolean> {
  let byCollector = feeds.get(pool);
  if (!byCollector) {
    byCollector = new Map();
    feeds.set(pool, byCollector);
  }
  const waiting = byCollector.get(collectorId);
  return new Promise<boolean>((settle, fail) => {
    const w = { ...entry, send, settle, fail };
    if (waiting) return void waiting.push(w);
    byCollector.set(collectorId, [w]);
    void drain(pool, byCollector, collectorId);
  });
}

/** Sends the collector's waiting events group after group, until none is left. */
async function drain(pool: pg.Pool, byCollector: Map<string, Waiting[]>, collectorId: string) {
  const waiting = byCollector.get(collectorId)!;
  while (waiting.length > 0) {
    const group = waiting.splice(0, MAX_GROUP);
    try {
      const inserted = await recordCollected(
        pool,
        group.flatMap((w) => (w.wait ? [w.wait] : [])),
      );
      // A redelivery racing its first delivery in one group is signalled once; the row is
      // the first one's (the collector would ignore the repeat anyway).
      const seen = new Set<string>();
      const items = group.filter((w) => !seen.has(w.item.webhookId) && seen.add(w.item.webhookId));
      // The newest entry's signal-with-start: its config's start arguments are the freshest.
      await group.at(-1)!.send(items.map((w) => w.item));
      const firsts = new Set<string>();
      for (const w of group) {
        const id = w.item.webhookId;
        const first = !firsts.has(id);
        firsts.add(id);
        w.settle(w.wait === null || (first && inserted.has(id.toLowerCase())));
      }
    } catch (err) {
      for (const w of group) w.fail(err);
    }
  }
  byCollector.delete(collectorId);
}
