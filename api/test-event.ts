import type pg from "pg";
import { validation } from "./errors.js";
import { eventTypeStore } from "./event-type-store.js";
import { check } from "./validation.js";

// What a test delivery sends (POST /configs/{id}/test): `webhooks.test` by default, or a
// catalog type's example under its type, so a receiver's handler for that type can be tried
// before the first real event.

/** The event of a test delivery, before its id and date. */
export interface TestEventOf {
  app: string;
  type: string;
  payload: unknown;
}

export const DEFAULT_TEST_EVENT: TestEventOf = {
  app: "webhooks",
  type: "webhooks.test",
  payload: { data: "test" },
};

/** The test event a request body asks for; a type the catalog lacks, or one without an example, is a 400 naming `eventType`. */
export async function testEventOf(pool: pg.Pool, body: unknown): Promise<TestEventOf> {
  if (body === undefined) return DEFAULT_TEST_EVENT;
  const { eventType } = check<{ eventType?: string }>("ConfigTestRequest", body);
  if (eventType === undefined) return DEFAULT_TEST_EVENT;
  // Catalog names are stored trimmed and lower-cased, as events carry their types.
  const name = eventType.trim().toLowerCase();
  const row = await eventTypeStore(pool).find(name);
  if (!row)
    throw validation(
      `eventType ${JSON.stringify(eventType)} is not in the event catalog (GET /event-types lists it)`,
    );
  if (row.example === null)
    throw validation(
      `eventType ${JSON.stringify(name)} has no example in the event catalog to send (PUT /event-types/${name} with an "example" adds one)`,
    );
  return { app: name.slice(0, name.indexOf(".")), type: name, payload: row.example };
}
