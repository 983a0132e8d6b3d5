import express, { type Router } from "express";
import type pg from "pg";
import type { EventCatalog } from "../core/event-catalog.js";
import { compileEventSchema, InvalidSchema, MAX_SCHEMA_BYTES } from "../core/event-schemas.js";
import { checkParsedBody, verifyUtf8 } from "./body-checks.js";
import { notFound, validation } from "./errors.js";
import { type EventTypeRow, type EventTypeWrite, eventTypeStore } from "./event-type-store.js";
import { MAX_PAGE_SIZE } from "./paging.js";
import type { RouteAccess } from "./route-access.js";
import { cursorJson } from "./serialize.js";
import { allowQuery, check, jsonBody } from "./validation.js";

// The event catalog: GET /event-types, GET/PUT/DELETE /event-types/{name}.

const DEFAULT_PAGE = 100;
/** Largest example payload, as JSON. */
export const MAX_EXAMPLE_BYTES = 64 * 1024;
/** What the body parser of PUT reads: the largest schema and example plus the rest. */
const PUT_LIMIT_BYTES = MAX_SCHEMA_BYTES + MAX_EXAMPLE_BYTES + 16 * 1024;
/** A catalog name: an event type as events carry it once normalised (no wildcard). */
const NAME_RE = /^[a-z0-9_-]+(\.[a-z0-9_-]+)+$/;

interface EventTypeUser {
  description?: string;
  schema?: unknown;
  example?: unknown;
  deprecated?: boolean;
}

/** The name as stored: trimmed and lower-cased, like the types events carry. */
function readName(raw: string): string {
  const name = raw.trim().toLowerCase();
  if (name.length > 255 || !NAME_RE.test(name))
    throw validation(
      `name must be an event type <app>.<type> (letters, digits, "_" and "-", dot-separated, no wildcard, at most 255 characters), got ${JSON.stringify(raw.slice(0, 300))}`,
    );
  return name;
}

function readEventType(body: unknown): EventTypeWrite {
  const t = check<EventTypeUser>("EventTypeUser", body);
  const schema = t.schema ?? null;
  const example = t.example ?? null;
  let problem: string | undefined;
  try {
    const payloadCheck = schema === null ? undefined : compileEventSchema(schema);
    if (example !== null) {
      const bytes = Buffer.byteLength(JSON.stringify(example));
      if (bytes > MAX_EXAMPLE_BYTES)
        throw validation(`example is ${bytes} bytes as JSON; at most ${MAX_EXAMPLE_BYTES}`);
      problem = payloadCheck?.(example);
    }
  } catch (err) {
    if (err instanceof InvalidSchema) throw validation(err.message);
    throw err;
  }
  // The check names the payload's path; here that payload is the example.
  if (problem)
    throw validation(`example does not match the schema: ${problem.replace(/^payload/, "example")}`);
  return { description: t.description ?? "", schema, example, deprecated: t.deprecated ?? false };
}

export function eventTypeJson(t: EventTypeRow) {
  return {
    name: t.name,
    description: t.description,
    ...(t.schema !== null ? { schema: t.schema } : {}),
    ...(t.example !== null ? { example: t.example } : {}),
    deprecated: t.deprecated,
    version: Number(t.version),
    createdAt: t.createdAt.toISOString(),
    updatedAt: t.updatedAt.toISOString(),
  };
}

function readListPage(query: Record<string, unknown>): { pageSize: number; after?: string } {
  const rawSize = query.pageSize as string | undefined;
  const pageSize = rawSize === undefined ? DEFAULT_PAGE : Number(rawSize);
  if (!Number.isInteger(pageSize) || pageSize < 1 || pageSize > MAX_PAGE_SIZE)
    throw validation(`pageSize must be an integer from 1 to ${MAX_PAGE_SIZE}, got "${rawSize}"`);
  const cursor = query.cursor as string | undefined;
  if (cursor === undefined) return { pageSize };
  const after = Buffer.from(cursor, "base64url").toString("utf8");
  if (!NAME_RE.test(after) || Buffer.from(after).toString("base64url") !== cursor)
    throw validation("cursor is not a value this API returned as `next`");
  return { pageSize, after };
}

/**
 * The catalog's routes. Mounted before the API's own body parser: PUT reads its body
 * with a larger bound (a schema may be up to MAX_SCHEMA_BYTES). A write refreshes this
 * process's copy of the catalog at once (other processes within CATALOG_TTL_MS).
 */
export function eventTypeRoutes(access: RouteAccess, pool: pg.Pool, catalog: EventCatalog): Router {
  const r = access.router();
  const store = eventTypeStore(pool);
  const missing = (name: string) => notFound(`event type ${JSON.stringify(name)} is not in the catalog`);

  r.get("/event-types", allowQuery("pageSize", "cursor"), async (req, res) => {
    const page = readListPage(req.query);
    const rows = await store.list(page.after, page.pageSize + 1);
    const items = rows.slice(0, page.pageSize);
    const next =
      rows.length > page.pageSize ? Buffer.from(items.at(-1)!.name).toString("base64url") : undefined;
    res.json(cursorJson(items.map(eventTypeJson), { pageSize: page.pageSize, next }));
  });

  r.get("/event-types/:name", allowQuery(), async (req, res) => {
    const name = readName(String(req.params.name));
    const row = await store.find(name);
    if (!row) throw missing(name);
    res.json({ data: eventTypeJson(row) });
  });

  r.put(
    "/event-types/:name",
    allowQuery(),
    jsonBody({ required: true }),
    express.json({ limit: PUT_LIMIT_BYTES, strict: false, type: "application/json", verify: verifyUtf8 }),
    checkParsedBody,
    async (req, res) => {
      const name = readName(String(req.params.name));
      const { row, created } = await store.put(name, readEventType(req.body));
      catalog.invalidate();
      res.status(created ? 201 : 200).json({ data: eventTypeJson(row) });
    },
  );

  r.delete("/event-types/:name", allowQuery(), async (req, res) => {
    const name = readName(String(req.params.name));
    if (!(await store.remove(name))) throw missing(name);
    catalog.invalidate();
    res.json({ data: { name, deleted: true } });
  });

  return r;
}
