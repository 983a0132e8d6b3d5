// Recorded delivery histories live in test/histories/<set>/<scenario>.json, one
// set per workflow revision. Sets of earlier revisions are kept and replayed
// too: deliveries started under them may still be running somewhere.

/** The set `npm run record-histories` writes by default; a new one with each workflow change. */
export const CURRENT_SET = "v4";

/** Every path of the delivery workflow the current set must cover. */
export const SCENARIOS = [
  "success",
  "retries-then-success",
  "permanent-failure",
  "cap-reached",
  "config-deactivated",
  "config-reactivated",
  "server-requested-delay",
  "replay",
  "cancelled",
  "claim-finds-row-closed",
  "restarted-by-reconciliation",
  "local-retries-then-success",
  "rate-limit-waits",
  "continued-as-new",
  "resumed-after-continue-as-new",
  "continued-as-new-while-retrying",
  "local-first-success",
  "local-first-handed-over",
  "local-first-retries",
] as const;

/**
 * The ordered key's sequencer's set (workflows/key-sequencer.ts): test/histories/record-ordered.ts
 * writes it, in its three modes (queue sends, `--fast` local-first sends, `--batched`),
 * with the scenarios of the earlier ordered sets.
 */
export const SEQUENCER_SET = "sequencer-v3";

/**
 * The key workflow of the earlier shape (workflows/ordered-delivery.ts), kept while runs of
 * it may remain: its sets are replayed, no longer recorded.
 */
export const ORDERED_SET = "ordered-v1";

/** Every path of the ordered-delivery workflow its set must cover. */
export const ORDERED_SCENARIOS = [
  "ordered-in-order",
  "ordered-head-retries",
  "ordered-head-skipped",
  "ordered-blocked-then-skip",
  "ordered-blocked-then-replayed",
  "ordered-blocked-then-deactivated",
  "ordered-head-cancelled",
  "ordered-continued-as-new",
] as const;

/**
 * The ordered-delivery workflow's set since its patch `ordered-first-send-here`: the key's
 * workflow makes the first send (`record-ordered.js --fast`); `-child` files are the delivery
 * workflows it started for what followed that send. ORDERED_SET keeps replaying too.
 */
export const ORDERED_FAST_SET = "ordered-v2";

/** Every path of the first send made by the key's workflow its set must cover. */
export const ORDERED_FAST_SCENARIOS = [
  "ordered-fast-in-order",
  "ordered-fast-first-send-retried",
  "ordered-fast-first-send-retried-child",
  "ordered-fast-blocked-then-skip",
  "ordered-fast-over-budget",
  "ordered-fast-over-budget-child",
  "ordered-fast-long-queue",
] as const;

/**
 * The ordered-delivery workflow's set since its patch `ordered-batches`: a batched ordered
 * config's key sends its queue in batches (`record-ordered.js --batched`). Earlier ordered
 * sets keep replaying.
 */
export const ORDERED_BATCHED_SET = "ordered-v3";

/** Every path of a key's batches its set must cover. */
export const ORDERED_BATCHED_SCENARIOS = [
  "ordered-batch-in-order",
  "ordered-batch-retried",
  "ordered-batch-blocked-then-skip",
] as const;

/**
 * The batched-delivery workflows' set (workflows/batch-delivery.ts): test/histories/record-batched.ts
 * writes it. v2: the collector fed by add-many signals (several events each); v1 kept (add).
 */
export const BATCHED_SET = "batched-v2";

/** Every path of the batched-delivery workflows its set must cover (the collector's and one batch's). */
export const BATCHED_SCENARIOS = [
  "batch-full-collector",
  "batch-full-batch",
  "batch-grouped-collector",
  "batch-grouped-batch",
  "batch-flushed-partial-collector",
  "batch-flushed-partial-batch",
  "batch-retried-collector",
  "batch-retried-batch",
  "batch-failed-collector",
  "batch-failed-batch",
  "batch-deactivated-collector",
  "batch-rate-limited-batch",
  "batch-continued-as-new-collector",
] as const;
