import type { EventCatalog } from "./event-catalog.js";
import type { EventMessage } from "./event-message.js";
import { deprecatedEvents, eventSchemaFailures } from "./metrics.js";
import { PermanentStartFailure } from "./start-failures.js";
import { MAX_EVENT_DEPTH, nestingDepth } from "./start-limits.js";

/**
 * Checks an event against its type's entry in the event catalog, on the one start
 * path (broker and POST /events alike). Events of a deprecated type are counted and
 * delivered. A payload that fails its type's schema is counted; with `enforce`
 * (--enforce-event-schemas) it is refused as a permanent failure of the event, which
 * POST /events answers 400 and the consumer dead-letters, both with the schema error.
 * Types outside the catalog, or without a schema, pass unchecked.
 */
export async function checkEventSchema(
  catalog: EventCatalog,
  event: EventMessage,
  enforce: boolean,
): Promise<void> {
  const entry = await catalog.entry(event.type);
  if (!entry) return;
  if (entry.deprecated) deprecatedEvents.inc({ type: entry.name });
  if (!entry.check) return;
  // Deeper than any delivery takes: refused by the event bounds when a config matches, and
  // a recursive schema would walk it as deep (out of stack on a 10 000-deep payload).
  if (nestingDepth(event.payload) > MAX_EVENT_DEPTH) return;
  const problem = entry.check(event.payload);
  if (problem === undefined) return;
  eventSchemaFailures.inc({ type: entry.name });
  if (enforce)
    throw new PermanentStartFailure(
      `the payload does not match the schema of event type "${entry.name}" (catalog version ${entry.version}): ${problem}`,
      "event",
    );
}
