import type pg from "pg";
import type { SendClaim } from "./send-claims.js";

// A config's cap on its sends in flight (maxConcurrency): a send counts from its claim
// (send-claims.ts, which names the config) until its attempt row ends the claim, so the
// config's live claims are what it has out. A claim past the cap is given back and the
// send waits, as for the rate limit, then tries again.

/** How long a send that found every slot taken waits before it asks again. */
export const SLOT_WAIT_MS = 500;

/**
 * Whether this claim may send now under the config's cap of `max` (take_send_slot, migration
 * 20261206200000: one round trip, serialized per config); false: the claim was given back.
 */
export async function takeSendSlot(
  pool: pg.Pool,
  configId: string,
  claim: SendClaim,
  max: number,
): Promise<boolean> {
  const { rows } = await pool.query<{ ok: boolean }>({
    name: "send-slot-take",
    text: "SELECT take_send_slot($1::uuid, $2::uuid, $3::int, $4, $5::int) AS ok",
    values: [configId, claim.webhookId, claim.retryAttempt, claim.owner, max],
  });
  return rows[0]!.ok;
}
