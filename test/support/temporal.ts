import { mkdtemp } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { type WorkflowHandle, WorkflowNotFoundError } from "@temporalio/client";
import { type DevServer, startDevServer } from "../../common/temporal-dev-server.js";
import { freePort } from "./ports.js";

let server: Promise<DevServer> | undefined;

/**
 * One real Temporal dev server for the whole test run (headless, in memory,
 * our search attributes registered), started on first use; stopped by hooks.ts.
 */
export function testTemporal(): Promise<DevServer> {
  server ??= (async () => {
    const dir = await mkdtemp(path.join(tmpdir(), "etp-temporal-"));
    return startDevServer({ port: await freePort(), headless: true, logFile: path.join(dir, "server.log") });
  })();
  return server;
}

export async function stopTestTemporal(): Promise<void> {
  if (server) await (await server).stop();
  server = undefined;
}

/** Resolves once the workflow exists (consumers start workflows asynchronously after a publish). */
export async function waitForWorkflow(handle: WorkflowHandle, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    try {
      await handle.describe();
      return;
    } catch (err) {
      if (!(err instanceof WorkflowNotFoundError) || Date.now() > deadline) throw err;
      await new Promise((r) => setTimeout(r, 100));
    }
  }
}
