import type { PrismaClient } from "../common/db/database.js";
import { Prisma } from "../generated/prisma/client.js";

const iso = (column: string) =>
  Prisma.raw(`to_char(${column} AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')`);

/**
 * The unpaged list (the reference contract returns every config) rendered as
 * JSON by PostgreSQL in one row: 10 000 configs cost one query and one string
 * instead of 10 000 objects built and serialised here. Same fields as
 * configJson (absent previousSecretExpiresAt once the overlap ended).
 */
export async function allConfigsJson(
  prisma: PrismaClient,
  filter: { id?: string | undefined; endpoint?: string | undefined },
): Promise<string> {
  const where = [
    filter.id ? Prisma.sql`id = ${filter.id}::uuid` : Prisma.sql`TRUE`,
    filter.endpoint ? Prisma.sql`endpoint = ${filter.endpoint}` : Prisma.sql`TRUE`,
  ];
  const rows = await prisma.$queryRaw<{ data: string }[]>`
    SELECT coalesce(json_agg(json_strip_nulls(json_build_object(
             'id', id, 'name', name, 'endpoint', endpoint, 'eventTypes', event_types, 'secret', secret,
             'previousSecretExpiresAt',
               CASE WHEN previous_secret_expires_at > now() THEN ${iso("previous_secret_expires_at")} END,
             'active', active, 'createdAt', ${iso("created_at")}, 'updatedAt', ${iso("updated_at")}))
           ORDER BY updated_at DESC, id DESC), '[]')::text AS data
      FROM configs WHERE ${Prisma.join(where, " AND ")}`;
  return `{"cursor":{"hasMore":false,"data":${rows[0]!.data}}}`;
}
