import type pg from "pg";
import { configColumns } from "../core/config-rows.js";
import type { StoredAuth } from "../core/endpoint-auth-rows.js";
import type { Config } from "../generated/prisma/client.js";

// The send claim (table send_claims, migration 20261129000000): before a send POSTs attempt
// `retryAttempt` of delivery `webhookId`, it takes that claim and keeps renewing it until
// its row is written. Temporal can start a second execution of a send while the first still runs (a
// missed heartbeat, a worker that looked lost); the second finds the claim live and backs
// off instead of POSTing the same attempt again. Writing the attempt row marks the claim
// done in the same transaction (attempts-store.ts), so a later execution finds the row.

export interface SendKey {
  webhookId: string;
  retryAttempt: number;
}

/**
 * How long a claim holds without being renewed. Its sender renews it every few seconds
 * while it runs, so a sender that died loses its claim this long after its last renewal,
 * and a retry of its send takes over then. A sender paused for longer than this (a process
 * stopped, not dead) can lose its claim too: that is the one way left to a second POST.
 */
export const CLAIM_LEASE_MS = 30_000;

export interface SendClaim extends SendKey {
  /** This execution of the send (unique per execution). */
  owner: string;
  /** How long the claim holds from now without a renewal (CLAIM_LEASE_MS). */
  leaseMs: number;
}

export interface ClaimedSend {
  config: Config | null;
  /** The attempt row is written already: this send happened, nothing to claim. */
  attemptWritten: boolean;
  /** The claim is this execution's; false when another live execution holds it. */
  claimed: boolean;
  /** Not claimed: until when the other execution's claim holds, unless renewed. */
  heldUntil: Date | null;
  /** The config's endpoint auth row (sealed), read in the same statement: null when it has none. */
  auth: StoredAuth | null;
}

/**
 * One statement: the config, whether the attempt row exists and, when it does not, the
 * claim. A live claim of another owner is left alone (ON CONFLICT ... WHERE): the
 * conflicting row is locked and its newest version checked, so a claim marked done by a
 * transaction that committed meanwhile is never taken over.
 */
const CLAIM_BEFORE_SEND = `WITH r AS (
    SELECT $1::uuid AS config_id, $2::uuid AS webhook_id, $3::int AS retry_attempt, $4::text AS owner),
  written AS (
    SELECT a.id FROM attempts a, r WHERE a.webhook_id = r.webhook_id AND a.retry_attempt = r.retry_attempt),
  claim AS (
    INSERT INTO send_claims (webhook_id, retry_attempt, owner, expires_at, config_id)
    SELECT r.webhook_id, r.retry_attempt, r.owner, now() + $5::int * interval '1 millisecond', r.config_id
      FROM r WHERE NOT EXISTS (SELECT 1 FROM written)
    ON CONFLICT (webhook_id, retry_attempt) DO UPDATE
      SET owner = EXCLUDED.owner, expires_at = EXCLUDED.expires_at, taken_at = now(), config_id = EXCLUDED.config_id
      WHERE send_claims.expires_at < now()
    RETURNING owner)
  SELECT ${configColumns("c")}, (SELECT id FROM written) AS "attemptId", (SELECT owner FROM claim) AS "claimedBy",
      (SELECT s.expires_at FROM send_claims s, r
        WHERE s.webhook_id = r.webhook_id AND s.retry_attempt = r.retry_attempt) AS "heldUntil",
      (SELECT row_to_json(ca) FROM config_auth ca WHERE ca.config_id = r.config_id) AS "endpointAuth"
    FROM r LEFT JOIN configs c ON c.id = r.config_id`;

/** What a send reads and takes before it POSTs (see CLAIM_BEFORE_SEND). */
export async function claimBeforeSend(
  pool: pg.Pool,
  configId: string,
  claim: SendClaim,
): Promise<ClaimedSend> {
  const { rows } = await pool.query<
    Config & {
      attemptId: string | null;
      claimedBy: string | null;
      heldUntil: Date | null;
      endpointAuth: StoredAuth | null;
    }
  >({
    name: "send-claim-before-send",
    text: CLAIM_BEFORE_SEND,
    values: [configId, claim.webhookId, claim.retryAttempt, claim.owner, Math.round(claim.leaseMs)],
  });
  const { attemptId, claimedBy, heldUntil, endpointAuth, ...config } = rows[0]!;
  const claimed = claimedBy === claim.owner;
  return {
    config: config.id === null ? null : config,
    attemptWritten: attemptId !== null,
    claimed,
    heldUntil: claimed ? null : heldUntil,
    auth: endpointAuth,
  };
}

/** Extends this execution's claim by its lease (its sender is still at work). */
export async function renewClaim(pool: pg.Pool, claim: SendClaim): Promise<void> {
  await pool.query({
    name: "send-claim-renew",
    text: `UPDATE send_claims SET expires_at = now() + $4::int * interval '1 millisecond'
            WHERE webhook_id = $1 AND retry_attempt = $2 AND owner = $3 AND expires_at <> 'infinity'`,
    values: [claim.webhookId, claim.retryAttempt, claim.owner, Math.round(claim.leaseMs)],
  });
}

/** Gives a claim back unsent (the send waits for the rate limit and will be asked again). */
export async function releaseClaim(pool: pg.Pool, claim: SendClaim): Promise<void> {
  await pool.query({
    name: "send-claim-release",
    text: `DELETE FROM send_claims WHERE webhook_id = $1 AND retry_attempt = $2 AND owner = $3
             AND expires_at <> 'infinity'`,
    values: [claim.webhookId, claim.retryAttempt, claim.owner],
  });
}
