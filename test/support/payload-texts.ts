import { connect } from "nats";

/** Every string and byte array inside `value` (Temporal payloads are bytes), as text: what a leak search reads. */
export function textsOf(value: unknown, out: string[] = []): string[] {
  if (value instanceof Uint8Array) out.push(Buffer.from(value).toString("utf8"));
  else if (typeof value === "string") out.push(value);
  else if (Array.isArray(value)) for (const v of value) textsOf(v, out);
  else if (value && typeof value === "object") for (const v of Object.values(value)) textsOf(v, out);
  return out;
}

/** Every message of `subject` in a NATS JetStream stream, as text (e.g. the audit trail a test run left). */
export async function streamTexts(stream: string, subject: string): Promise<string[]> {
  const nc = await connect({ servers: "nats://127.0.0.1:4222" });
  try {
    const consumer = await nc.jetstream().consumers.get(stream, { filterSubjects: subject });
    const texts: string[] = [];
    for (let m = await consumer.next({ expires: 2000 }); m; m = await consumer.next({ expires: 2000 }))
      texts.push(m.string());
    return texts;
  } finally {
    await nc.close();
  }
}
