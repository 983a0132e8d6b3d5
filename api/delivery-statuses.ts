/** A delivery's statuses as the API names them: `waiting` before any attempt, else its newest attempt's. */
export const DELIVERY_STATUSES = ["waiting", "success", "to retry", "retrying", "failed"] as const;
