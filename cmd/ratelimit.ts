// `ratelimit`: the Envoy-compatible rate limit decision service. Configured only by
// environment variables (docs/ratelimit/configuration.md#settings). The serving code (gRPC, counter stores)
// is imported only where calls are served, so the primary of RATELIMIT_PROCESSES stays small.

import cluster from "node:cluster";
import v8 from "node:v8";
import type { Logger } from "../common/logger.js";
import { VERSION } from "../common/version.js";
import { createServiceLogger } from "../ratelimit/log.js";
import {
  holdsOwnYoungGeneration,
  ownHeapFlags,
  SERVING_SEMI_SPACE_MB,
} from "../ratelimit/processes/heap-flags.js";
import { MEMBER_READY, type MemberReady, runPrimary, SLOT_ENV } from "../ratelimit/processes/primary.js";
import { holdYoungGeneration } from "../ratelimit/processes/young-generation.js";
import type { RunningService } from "../ratelimit/runner.js";
import { loadSettings, SettingsError } from "../ratelimit/settings/environment.js";
import { USAGE } from "../ratelimit/settings/usage.js";

/** -h/--help and -v/--version; any other argument is refused (settings are environment variables). */
function handleArguments(args: string[]): void {
  if (args.some((a) => a === "-h" || a === "--help")) {
    process.stdout.write(USAGE);
    process.exit(0);
  }
  if (args.some((a) => a === "-v" || a === "--version")) {
    process.stdout.write(`${VERSION}\n`);
    process.exit(0);
  }
  if (args.length > 0) {
    console.error(
      `ratelimit: unexpected argument ${JSON.stringify(args[0])}: the service is configured by environment variables (see ratelimit --help)`,
    );
    process.exit(2);
  }
}

async function main(): Promise<void> {
  // Cluster workers get the primary's arguments too; only the command line's own invocation checks them.
  if (cluster.isPrimary) handleArguments(process.argv.slice(2));
  let settings: ReturnType<typeof loadSettings>;
  try {
    settings = loadSettings();
  } catch (err) {
    if (err instanceof SettingsError) {
      console.error(`ratelimit: ${err.message}`);
      process.exit(2);
    }
    throw err;
  }
  if (cluster.isPrimary && settings.processes > 1) {
    const logger = createServiceLogger(settings);
    warnNotices(settings, logger);
    await runPrimary(settings, logger);
    return;
  }
  // A serving process started by runPrimary (not merely any cluster worker that loads this file).
  if (cluster.isWorker && process.env[SLOT_ENV]) {
    await serveAsMember(settings);
    return;
  }
  const logger = createServiceLogger(settings);
  warnNotices(settings, logger);
  // Serving by itself: no primary gave this process the serving heap flags on its command line.
  for (const flag of ownHeapFlags()) v8.setFlagsFromString(flag);
  if (holdsOwnYoungGeneration()) holdYoungGeneration(SERVING_SEMI_SPACE_MB);
  const { startService } = await import("../ratelimit/runner.js");
  const running = await startService(settings, logger);
  // Before the line that says it started: a supervisor may send SIGTERM as soon as it reads it.
  stopOnSignals(running, logger);
  logger.warn(
    {
      grpc: running.grpc.address,
      http: `${settings.host}:${running.http.port}`,
      debug: `${settings.debugHost}:${running.debug.port}`,
      backend: settings.backendType,
      ...(running.pullStats
        ? { pullStats: `${settings.pullStatsAddr.host}:${running.pullStats.port}${settings.pullStatsPath}` }
        : {}),
    },
    "rate limit service started",
  );
}

/** One of RATELIMIT_PROCESSES serving processes: statistics and readiness go to the primary. */
async function serveAsMember(settings: ReturnType<typeof loadSettings>): Promise<void> {
  const logger = createServiceLogger(settings).child({ process: Number(process.env[SLOT_ENV]) });
  const send = (m: object) => {
    if (process.connected) process.send?.(m);
  };
  const { startService } = await import("../ratelimit/runner.js");
  const running = await startService(settings, logger, { member: { sendStats: send } });
  const ready: MemberReady = {
    type: MEMBER_READY,
    grpc: running.grpc.address,
    httpPort: running.http.port,
    debugPort: running.debug.port,
  };
  stopOnSignals(running, logger);
  send(ready);
  logger.info("serving");
}

/** Settings read but without effect (e.g. deprecated ones), once per service. */
function warnNotices(settings: ReturnType<typeof loadSettings>, logger: Logger): void {
  for (const notice of settings.notices) logger.warn(notice);
}

function stopOnSignals(running: RunningService, logger: Logger): void {
  const onSignal = (signal: NodeJS.Signals) => {
    logger.warn({ signal }, "shutting down: health checks now fail, in-flight calls finish");
    running.stop().then(
      () => process.exit(0),
      (err: Error) => {
        logger.error({ err: err.message }, "shutdown failed");
        process.exit(1);
      },
    );
  };
  process.once("SIGTERM", onSignal);
  process.once("SIGINT", onSignal);
}

main().catch((err: Error) => {
  console.error(`ratelimit: ${err.message}`);
  // Settings found unusable only at start (e.g. an unreadable certificate file) exit like bad values.
  process.exit(err instanceof SettingsError ? 2 : 1);
});
