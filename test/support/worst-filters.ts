import type { EventMessage } from "../../core/event-message.js";
import { MAX_EVENT_BYTES } from "../../core/start-limits.js";

// The costliest payload filters and the largest events, shared by the filter-cost
// bench (bench/delivery/filter-bounds.ts) and the tenant isolation test
// (test/webhooks/payload-filter-bounds.test.ts). "Worst" is what the checker of
// filters accepted before limits on patterns and lists: a
// 16 KiB filter of counted repetitions, which RE2 runs in an NFA whose cost is
// the program's size times the text's length, and lists of 1 000 values against
// an array of 10^5 elements.

/** A string of `length` a's and b's in a fixed pseudo-random order: no DFA cache helps. */
export function abText(length: number, seed = 1): string {
  const out = new Array<string>(length);
  let s = seed;
  for (let i = 0; i < length; i++) {
    s = (s * 1103515245 + 12345) & 0x7fffffff;
    out[i] = (s >> 16) & 1 ? "a" : "b";
  }
  return out.join("");
}

const envelope = (key: string, payload: unknown, tenant?: string): EventMessage => ({
  idempotency_key: key,
  date: "2026-11-28T09:00:00Z",
  app: "costly",
  version: "v1",
  type: "costly.event",
  payload,
  ...(tenant ? { tenant } : {}),
});

/** The largest event of one string: a 2 MiB text (less room for the envelope). */
export function largestTextEvent(
  key: string,
  tenant?: string,
  length = MAX_EVENT_BYTES - 1024,
): EventMessage {
  return envelope(key, { text: `${abText(length)}c` }, tenant);
}

/** An event with an array of 10^5 numbers (0 .. 99 999), well within the event bound. */
export function largestListEvent(key: string, tenant?: string): EventMessage {
  return envelope(key, { list: Array.from({ length: 100_000 }, (_, i) => i) }, tenant);
}

/** One regex with RE2's largest program (some 1.4 million instructions), as one config's filter. */
export const oneHugeRegexFilter = (): unknown => ({
  "payload.text": { $regex: `[ab]*a${"[ab]{999}".repeat(1398)}$` },
});

/** The recipe: as many `[ab]*a[ab]{999}$` as fit in 16 KiB, under an $or. */
export const manyRegexFilter = (bytes = 16 * 1024): unknown => {
  const one = { "payload.text": { $regex: "[ab]*a[ab]{999}$" } };
  const per = JSON.stringify(one).length + 1;
  return { $or: Array.from({ length: Math.floor((bytes - 10) / per) }, () => one) };
};

/** $in, $nin and $all over 1 000 (600 for $all) values none of which the list holds. */
export const bigListFilter = (): unknown => {
  const values = (n: number, from: number) => Array.from({ length: n }, (_, i) => -(from + i));
  return {
    $or: [
      { "payload.list": { $in: values(1000, 1) } },
      { "payload.list": { $nin: values(1000, 1001).concat([5]) } },
      { "payload.list": { $all: values(600, 2001) } },
    ],
  };
};

/** A filter users write (a case-insensitive regex, a list, a range) and the event it is made for. */
export const typicalFilter = (): unknown => ({
  "payload.customer.email": { $regex: "@example\\.com$", $options: "i" },
  "payload.currency": { $in: ["EUR", "USD", "GBP"] },
  "payload.amount": { $gte: 100 },
});

export function typicalEvent(key: string, tenant?: string): EventMessage {
  return envelope(
    key,
    { customer: { email: "Ann@Example.com", tier: "gold" }, currency: "EUR", amount: 120, tags: ["vip"] },
    tenant,
  );
}
