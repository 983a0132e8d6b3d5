import type { Database } from "../common/db/database.js";
import { failPending } from "./attempts-store.js";
import { closeUnsent } from "./unsent-deliveries.js";

/**
 * Ends deliveries without a further send, with the reason: each one's queued or claimed
 * attempt row, or its waiting unsent row (a first send that never went). Returns how many
 * rows it closed.
 */
export async function closeDeliveries(
  { prisma, pool }: Pick<Database, "prisma" | "pool">,
  webhookIds: readonly string[],
  reason: string,
): Promise<number> {
  let closed = 0;
  for (const id of webhookIds)
    closed += (await failPending(prisma, id, reason)) + (await closeUnsent(pool, id, reason));
  return closed;
}
