import type { PrismaClient } from "../common/db/database.js";

// Endpoint health, read from the attempts table: each real send is a row with its
// status code and duration. A config's failing streak starts with the first send
// after its last 2xx (and after its last activation); "failing since" is that send.

/** The windows GET /configs/{id}/stats reports, newest first. */
export const HEALTH_WINDOWS = [
  { name: "5m", ms: 5 * 60_000 },
  { name: "1h", ms: 3_600_000 },
  { name: "24h", ms: 86_400_000 },
] as const;

export interface WindowStats {
  window: string;
  attempts: number;
  succeeded: number;
  failed: number;
  /** Share of sends answered 2xx; null without any send. */
  successRate: number | null;
  /** Send durations (ms) of the window's sends; null without any timed send. */
  latencyMs: { p50: number; p90: number; p99: number } | null;
}

export interface EndpointHealth {
  windows: WindowStats[];
  /** The first send of the current failing streak; undefined when the last send succeeded. */
  failingSince: Date | undefined;
}

interface WindowRow {
  attempts: number;
  succeeded: number;
  p: number[] | null;
}

/** The start of the config's failing streak (no 2xx since), or undefined. */
export async function failingSince(prisma: PrismaClient, configId: string): Promise<Date | undefined> {
  const rows = await prisma.$queryRaw<{ since: Date | null }[]>`
    SELECT min(a.created_at) AS since FROM attempts a, configs c
     WHERE c.id = ${configId}::uuid AND a.config_id = c.id
       AND a.created_at > greatest(coalesce(c.activated_at, '-infinity'),
             coalesce((SELECT max(s.created_at) FROM attempts s
                        WHERE s.config_id = c.id AND s.status_code BETWEEN 200 AND 299), '-infinity'))`;
  return rows[0]?.since ?? undefined;
}

export async function endpointHealth(prisma: PrismaClient, configId: string): Promise<EndpointHealth> {
  const windows = await Promise.all(
    HEALTH_WINDOWS.map(async ({ name, ms }) => {
      const since = new Date(Date.now() - ms);
      const [row] = await prisma.$queryRaw<WindowRow[]>`
        SELECT count(*)::int AS attempts,
               count(*) FILTER (WHERE status_code BETWEEN 200 AND 299)::int AS succeeded,
               percentile_disc(ARRAY[0.5, 0.9, 0.99]) WITHIN GROUP (ORDER BY duration_ms)
                 FILTER (WHERE duration_ms IS NOT NULL) AS p
          FROM attempts WHERE config_id = ${configId}::uuid AND created_at >= ${since}`;
      const { attempts, succeeded, p } = row!;
      return {
        window: name,
        attempts,
        succeeded,
        failed: attempts - succeeded,
        successRate: attempts ? Number((succeeded / attempts).toFixed(4)) : null,
        latencyMs: p ? { p50: p[0]!, p90: p[1]!, p99: p[2]! } : null,
      };
    }),
  );
  return { windows, failingSince: await failingSince(prisma, configId) };
}

/** Active configs failing since before `cutoff`, for automatic deactivation. */
export function configsFailingSince(prisma: PrismaClient, cutoff: Date) {
  return prisma.$queryRaw<{ id: string; endpoint: string; since: Date }[]>`
    SELECT c.id::text AS id, c.endpoint, f.since
      FROM configs c
      CROSS JOIN LATERAL (
        SELECT min(a.created_at) AS since FROM attempts a
         WHERE a.config_id = c.id
           AND a.created_at > greatest(coalesce(c.activated_at, '-infinity'),
                 coalesce((SELECT max(s.created_at) FROM attempts s
                            WHERE s.config_id = c.id AND s.status_code BETWEEN 200 AND 299), '-infinity'))) f
     WHERE c.active AND f.since < ${cutoff}`;
}
