import { createHash } from "node:crypto";

// Which of --nats-partitions an event message belongs to. Every consuming process computes
// it for every message of the partitions it owns, so it must be the same everywhere and
// for ever: a change moves keys between partitions, and then two processes could hand one
// key's events over at once.

/** --nats-partitions at most: each partition is a durable consumer reading the whole stream. */
export const MAX_PARTITIONS = 64;

/**
 * What orders an event across processes: its tenant as the message names it and its
 * ordering key, as for the lanes of workers/ordered-lanes.ts. An event without a key is in
 * its tenant's one ordered stream (for an ordered config, the config is then the key). A
 * message that is not an event message (not JSON, no object) has neither: it only has to
 * land in one partition, and any fixed one does.
 */
export function partitionKey(data: Uint8Array): string {
  let m: unknown;
  try {
    m = JSON.parse(Buffer.from(data.buffer, data.byteOffset, data.byteLength).toString("utf8"));
  } catch {
    m = undefined;
  }
  const fields =
    typeof m === "object" && m !== null && !Array.isArray(m) ? (m as Record<string, unknown>) : {};
  // As core/event-message.ts reads them: the tenant trimmed, the key as it is.
  const tenant =
    typeof fields.tenant === "string" && fields.tenant.trim() !== "" ? fields.tenant.trim() : null;
  const key =
    typeof fields.ordering_key === "string" && fields.ordering_key !== "" ? fields.ordering_key : null;
  return JSON.stringify([tenant, key]);
}

/** The partition of a key among `count`: the first 32 bits of its SHA-256, modulo `count`. */
export function partitionOfKey(key: string, count: number): number {
  return createHash("sha256").update(key, "utf8").digest().readUInt32BE(0) % count;
}

/** The partition of an event message among `count`. */
export const partitionOf = (data: Uint8Array, count: number): number =>
  count <= 1 ? 0 : partitionOfKey(partitionKey(data), count);
