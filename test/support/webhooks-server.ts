import { freePort } from "./ports.js";
import { createTestDatabase, type TestDatabase } from "./postgres.js";
import { type Executable, ServiceProcess } from "./process.js";
import { testTemporal } from "./temporal.js";

/** Retries a test can wait for: the first after 200 ms, none more than 1 s apart. */
export const FAST_RETRIES = ["--min-backoff-delay", "200ms", "--max-backoff-delay", "1s"];

export interface WebhooksUnderTest {
  url: string;
  db: TestDatabase;
  process: ServiceProcess;
  taskQueue: string;
  temporalAddress: string;
  /** JSON request helper returning status and parsed body. */
  call(method: string, path: string, body?: unknown, headers?: Record<string, string>): Promise<ApiAnswer>;
  stop(): Promise<void>;
}

export interface ApiAnswer {
  status: number;
  // biome-ignore lint/suspicious/noExplicitAny: test bodies are inspected field by field
  body: any;
  text: string;
}

/** `webhooks serve` on a fresh migrated database and the shared test Temporal server. */
export async function startWebhooks(
  opts: {
    worker?: boolean;
    args?: string[];
    nodeArgs?: string[];
    /** Another instance's database, shared (and left for its owner to drop). */
    db?: TestDatabase;
    /** A Temporal server of the test's own (the shared test server otherwise). */
    temporalAddress?: string;
    /** Listen host (loopback by default); the tests still call it on 127.0.0.1. */
    listenHost?: string;
    /** Extra environment of the process (e.g. OTEL_EXPORTER_OTLP_ENDPOINT). */
    env?: Record<string, string>;
    /** Another tree's `webhooks` (e.g. a release's bin/webhooks) instead of this tree's. */
    executable?: Executable;
  } = {},
): Promise<WebhooksUnderTest> {
  const db = opts.db ?? (await createTestDatabase());
  const temporal = opts.temporalAddress ? { address: opts.temporalAddress } : await testTemporal();
  const port = await freePort();
  const taskQueue = `test-${port}-${Date.now()}`;
  const proc = new ServiceProcess(
    opts.executable ?? "webhooks",
    [
      "serve",
      ...(opts.worker ? ["--worker"] : []),
      "--listen",
      `${opts.listenHost ?? "127.0.0.1"}:${port}`,
      "--storage-sqldb-conn-string",
      db.url,
      "--temporal-address",
      temporal.address,
      "--task-queue",
      taskQueue,
      ...(opts.args ?? []),
    ],
    opts.env ?? {},
    opts.nodeArgs,
  );
  const url = `http://127.0.0.1:${port}`;
  try {
    await proc.waitHealthy(`${url}/_healthcheck`);
  } catch (err) {
    await proc.stop();
    if (!opts.db) await db.drop();
    throw err;
  }
  return {
    url,
    db,
    process: proc,
    taskQueue,
    temporalAddress: temporal.address,
    async call(method, path, body, headers = {}) {
      const res = await fetch(url + path, {
        method,
        headers: { ...(body !== undefined ? { "content-type": "application/json" } : {}), ...headers },
        ...(body !== undefined ? { body: typeof body === "string" ? body : JSON.stringify(body) } : {}),
      });
      const text = await res.text();
      let parsed: unknown;
      try {
        parsed = text ? JSON.parse(text) : undefined;
      } catch {
        parsed = undefined;
      }
      return { status: res.status, body: parsed, text };
    },
    async stop() {
      await proc.stop();
      if (!opts.db) await db.drop();
    },
  };
}
