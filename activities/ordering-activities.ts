import type pg from "pg";

// The row of an ordering key (table ordering_keys): what GET /configs/{id}/ordering-keys
// lists and the blocked-keys metric counts, written by its sequencer
// (workflows/key-sequencer.ts) and by the key workflows of the earlier shape
// (workflows/ordered-delivery.ts). The row outlives the runs: it numbers the key's backlog.

export interface OrderingKeyState {
  configId: string;
  orderingKey: string;
  workflowId: string;
  /** `gone`: a workflow of the earlier shape ends idle; the row stays, idle. */
  state: "active" | "blocked" | "gone";
  headWebhookId?: string;
  reason?: string;
}

export interface OrderingActivities {
  recordOrderingKey(s: OrderingKeyState): Promise<void>;
}

export function createOrderingActivities({ pool }: { pool: pg.Pool }): OrderingActivities {
  return {
    async recordOrderingKey(s) {
      if (s.state === "gone") {
        await pool.query({
          name: "ordering-key-gone",
          text: `UPDATE ordering_keys SET state = 'idle', head_webhook_id = NULL, reason = NULL, updated_at = now()
                WHERE config_id = $1::uuid AND ordering_key = $2`,
          values: [s.configId, s.orderingKey],
        });
        return;
      }
      await pool.query({
        name: "ordering-key-record",
        text: `INSERT INTO ordering_keys (config_id, ordering_key, workflow_id, state, head_webhook_id, reason, updated_at)
               VALUES ($1::uuid, $2, $3, $4, $5::uuid, $6, now())
               ON CONFLICT (config_id, ordering_key) DO UPDATE
                 SET workflow_id = EXCLUDED.workflow_id, state = EXCLUDED.state,
                     head_webhook_id = EXCLUDED.head_webhook_id, reason = EXCLUDED.reason, updated_at = now()`,
        values: [s.configId, s.orderingKey, s.workflowId, s.state, s.headWebhookId ?? null, s.reason ?? null],
      });
    },
  };
}
