import pg from "pg";
import type { Received } from "./receiver.js";

/** Each event received in batched POSTs, by its payload's `seq`, with the batch ids (svc-webhook-id) that carried it. */
export function batchCarriers(requests: Received[]): Map<number, string[]> {
  const bySeq = new Map<number, string[]>();
  for (const r of requests) {
    const batchId = String(r.headers["svc-webhook-id"]);
    for (const e of JSON.parse(r.body) as { payload: { seq: number } }[])
      bySeq.set(e.payload.seq, [...(bySeq.get(e.payload.seq) ?? []), batchId]);
  }
  return bySeq;
}

/** Waits (at most 60 s) until `count` deliveries of the config have a success row. */
export async function waitForSuccessRows(dbUrl: string, configId: string, count: number): Promise<void> {
  const db = new pg.Client({ connectionString: dbUrl });
  await db.connect();
  try {
    const successes = async () =>
      (
        await db.query<{ n: number }>(
          "SELECT count(DISTINCT webhook_id)::int AS n FROM attempts WHERE config_id = $1 AND status = 'success'",
          [configId],
        )
      ).rows[0]!.n;
    const until = Date.now() + 60_000;
    while ((await successes()) < count) {
      if (Date.now() > until)
        throw new Error(`${await successes()} of ${count} deliveries have a success row`);
      await new Promise((r) => setTimeout(r, 250));
    }
  } finally {
    await db.end();
  }
}
