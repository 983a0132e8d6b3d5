import type { DeliveryEnv } from "./delivery-env.js";
import { eventually, sql } from "./poison.js";

/**
 * A dead letter of config `configId`: its row is made unusable (an endpoint that is not a
 * URL, as only SQL can write), then an event it subscribes to is published. Its id.
 */
export async function deadLetterOf(
  env: DeliveryEnv,
  configId: string,
  event: Record<string, unknown>,
): Promise<string> {
  await sql(env.api, `UPDATE configs SET endpoint = 'http://[not a host' WHERE id = $1`, [configId]);
  await env.publish(env.event(event));
  let id = "";
  await eventually(
    `a dead letter of config ${configId}`,
    async () => {
      const rows = await sql<{ id: string }>(env.api, "SELECT id FROM dead_letters WHERE config_id = $1", [
        configId,
      ]);
      id = rows[0]?.id ?? "";
      return id !== "";
    },
    30_000,
  );
  return id;
}
