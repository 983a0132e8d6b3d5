// How long one send activity may take, derived from the send timeout so the two always
// agree: a fixed activity timeout shorter than a long --send-timeout would have Temporal
// retry a send whose POST is still open. Pure: the delivery workflow imports it too.

/** Beyond the POST (whose timeout covers every redirect hop): the rate limit permission
 * (bounded by rate-limit-gate.ts to a few seconds) and the reads and writes around it. */
export const SEND_OVERHEAD_MS = 60_000;

/** Start-to-close timeout of a send activity. */
export const sendBudgetMs = (sendTimeoutMs: number): number => sendTimeoutMs + SEND_OVERHEAD_MS;

/** What deliveries started before the send timeout was in their policy were given. */
export const LEGACY_SEND_BUDGET_MS = 120_000;
