// Signals to one ordering key's workflow leave this process one at a time, in the order
// they were handed in; the events handed in while a signal is in flight leave together in
// the next one. Under a burst a key's events then cost the key's workflow one signal and one
// workflow task per batch instead of per event, and the consumer's lane (ordered-lanes.ts)
// need not wait for a Temporal round trip per event: handing in decides the order.
import type { OrderedItem } from "../workflows/ordered-delivery.js";

/** Sends one signal carrying `items` (signal-with-start of the key's workflow). */
export type SendItems = (items: OrderedItem[]) => Promise<void>;

interface Waiting {
  item: OrderedItem;
  send: SendItems;
  resolve(): void;
  reject(err: unknown): void;
}

/** Under Temporal's payload limit with room to spare (an item is about 1 KB). */
const MAX_ITEMS_PER_SIGNAL = 100;

const outboxes = new Map<string, Waiting[]>();

/**
 * Hands `item` to the signals of the workflow `keyWorkflowId`, synchronously in call
 * order; resolves once a signal carrying it was accepted by Temporal. A failed signal
 * fails its items only (each caller's start fails and its message is redelivered), as
 * when each event had its own signal.
 */
export function signalInOrder(keyWorkflowId: string, item: OrderedItem, send: SendItems): Promise<void> {
  return new Promise((resolve, reject) => {
    const waiting = outboxes.get(keyWorkflowId);
    const entry = { item, send, resolve, reject };
    if (waiting) {
      waiting.push(entry);
      return;
    }
    const fresh = [entry];
    outboxes.set(keyWorkflowId, fresh);
    void drain(keyWorkflowId, fresh);
  });
}

async function drain(keyWorkflowId: string, waiting: Waiting[]): Promise<void> {
  while (waiting.length > 0) {
    const batch = waiting.splice(0, MAX_ITEMS_PER_SIGNAL);
    try {
      // The latest caller's send: its config (failure policy) is the newest this process read.
      await batch.at(-1)!.send(batch.map((w) => w.item));
      for (const w of batch) w.resolve();
    } catch (err) {
      for (const w of batch) w.reject(err);
    }
  }
  outboxes.delete(keyWorkflowId);
}
