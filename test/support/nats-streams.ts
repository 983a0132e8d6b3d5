// tags: @needs-services (the shared NATS server)
import { connect } from "nats";

/**
 * Deletes a test's stream from the shared NATS server: each stream sets aside its maximum
 * bytes of the server's JetStream storage, so streams left behind fill it across runs.
 */
export async function deleteStream(name: string): Promise<void> {
  const nc = await connect({ servers: "nats://127.0.0.1:4222" });
  try {
    await (await nc.jetstreamManager()).streams.delete(name).catch(() => {});
  } finally {
    await nc.close();
  }
}
