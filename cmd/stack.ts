import { type ChildProcess, spawn } from "node:child_process";
import { mkdir } from "node:fs/promises";
import { connect } from "node:net";
import path from "node:path";
import { parseArgs } from "node:util";
import { redact } from "../common/db/database.js";
import { createLogger } from "../common/logger.js";
import { fromRoot } from "../common/paths.js";
import { type DevServer, startDevServer } from "../common/temporal-dev-server.js";
import { ensureKeyFile } from "../core/secrets-key-file.js";
import { localPostgresKeyFile } from "../core/secrets-startup.js";
import { searchAttributeCliArgs } from "../workflows/search-attributes.js";

// `npm start`: the whole stack on embedded defaults, in the foreground. Starts
// Temporal (the dev server with its state under .data/, or with `--temporal
// server` the production server on PostgreSQL through scripts/temporal-server.sh),
// then each service as a child process, waits until each is healthy and prints
// where everything is. Ctrl-C or SIGTERM stops the children, then Temporal.

const HELP = `usage: npm start [-- --data-dir DIR] [--temporal dev|server] [--temporal-nodes 1] [--temporal-name temporal]
       [--temporal-port 7233] [--ui-port 8233] [--api-port 8080]
       [--ratelimit-port 8082] [--ratelimit-grpc-port 8081] [--ratelimit-debug-port 6070] [--entity-port 8090]

Starts Temporal (gRPC :7233, Web UI :8233) and every service of the platform on
embedded defaults. --temporal dev (default): the Temporal CLI's dev server, state in
DIR/temporal/dev.db. --temporal server: the production Temporal server on the local
PostgreSQL (databases NAME and NAME_visibility, --temporal-name, default temporal),
--temporal-nodes nodes of it,
built from the Go module proxy on first use (about 4 minutes), its state kept in
those databases across restarts.
Reuses PostgreSQL on :5432 when scripts/setup.sh started it, else the embedded
PGlite database. Ctrl-C stops everything.`;

interface Service {
  name: string;
  args: string[];
  env?: Record<string, string>;
  health: string;
  describe: string;
}

const logger = createLogger("stack");
const children: { name: string; child: ChildProcess }[] = [];
let temporal: DevServer | undefined;
/** The production server's instance name, when the stack started it. */
let productionTemporal: string | undefined;
let stopping = false;

const portOpen = (port: number) =>
  new Promise<boolean>((resolve) => {
    const socket = connect({ host: "127.0.0.1", port });
    socket.once("connect", () => {
      socket.end();
      resolve(true);
    });
    socket.once("error", () => resolve(false));
  });

async function waitHealthy(service: Service, child: ChildProcess, timeoutMs = 90_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  let last = "";
  while (Date.now() < deadline) {
    if (child.exitCode !== null) throw new Error(`${service.name} exited with code ${child.exitCode}`);
    try {
      const res = await fetch(service.health, { signal: AbortSignal.timeout(2000) });
      if (res.ok) return;
      last = `HTTP ${res.status} ${await res.text()}`;
    } catch (err) {
      last = (err as Error).message;
    }
    await new Promise((r) => setTimeout(r, 250));
  }
  throw new Error(`${service.name} not healthy at ${service.health} after ${timeoutMs / 1000}s: ${last}`);
}

function startService(service: Service): ChildProcess {
  const child = spawn(process.execPath, service.args, {
    stdio: ["ignore", "inherit", "inherit"],
    env: { ...process.env, ...service.env },
  });
  children.push({ name: service.name, child });
  child.once("exit", (code, signal) => {
    if (!stopping) {
      logger.error({ service: service.name, code, signal }, "service exited: stopping the stack");
      void stop(1);
    }
  });
  return child;
}

async function stop(code: number): Promise<void> {
  if (stopping) return;
  stopping = true;
  logger.info("stopping the stack");
  await Promise.all(
    children.map(
      ({ child }) =>
        new Promise<void>((resolve) => {
          if (child.exitCode !== null || child.signalCode !== null) return resolve();
          const timer = setTimeout(() => child.kill("SIGKILL"), 35_000);
          child.once("exit", () => {
            clearTimeout(timer);
            resolve();
          });
          child.kill("SIGTERM");
        }),
    ),
  );
  await temporal?.stop();
  const name = productionTemporal;
  if (name)
    await new Promise((resolve) =>
      spawn("bash", [fromRoot("scripts", "temporal-server.sh"), "stop", "--name", name], {
        stdio: "inherit",
      }).once("exit", resolve),
    );
  logger.info("stack stopped");
  process.exit(code);
}

/** The production server through its script (idempotent: reuses running nodes and their state). */
async function startProductionTemporal(
  name: string,
  port: number,
  uiPort: number,
  nodes: number,
): Promise<string> {
  if (!Number.isInteger(nodes) || nodes < 1) throw new Error(`--temporal-nodes must be a positive integer`);
  const script = fromRoot("scripts", "temporal-server.sh");
  const args = ["start", "--name", name, "--port", String(port), "--nodes", String(nodes)];
  logger.info({ nodes }, "starting the production Temporal server (scripts/temporal-server.sh)");
  productionTemporal = name;
  // The script logs its progress (the first build takes minutes) on stderr, which stays ours.
  const child = spawn("bash", [script, ...args, "--ui-port", String(uiPort)], {
    stdio: ["ignore", "pipe", "inherit"],
  });
  let stdout = "";
  child.stdout.on("data", (d) => {
    stdout += d;
  });
  const code = await new Promise((resolve) => child.once("exit", resolve));
  if (code !== 0) throw new Error(`scripts/temporal-server.sh exited with ${code}`);
  return stdout.trim();
}

function parseStackArgs() {
  return parseArgs({
    options: {
      "data-dir": { type: "string", default: fromRoot(".data") },
      temporal: { type: "string", default: "dev" },
      "temporal-nodes": { type: "string", default: "1" },
      "temporal-name": { type: "string", default: "temporal" },
      "temporal-port": { type: "string", default: "7233" },
      "ui-port": { type: "string", default: "8233" },
      "api-port": { type: "string", default: "8080" },
      "ratelimit-port": { type: "string", default: "8082" },
      "ratelimit-grpc-port": { type: "string", default: "8081" },
      "ratelimit-debug-port": { type: "string", default: "6070" },
      "entity-port": { type: "string", default: "8090" },
      help: { type: "boolean", short: "h" },
    },
  }).values;
}

type StackArgs = ReturnType<typeof parseStackArgs>;

/** The Temporal server: the production one (--temporal server), one already listening, or a dev server. */
async function startTemporal(values: StackArgs, dataDir: string): Promise<{ address: string; ui: string }> {
  const temporalPort = Number(values["temporal-port"]);
  const uiPort = Number(values["ui-port"]);
  let temporalAddress = `127.0.0.1:${temporalPort}`;
  let temporalUi = `http://127.0.0.1:${uiPort}`;
  if (values.temporal !== "dev" && values.temporal !== "server")
    throw new Error(`--temporal must be dev or server, not ${JSON.stringify(values.temporal)}`);
  if (values.temporal === "server") {
    const nodes = Number(values["temporal-nodes"]);
    temporalAddress = await startProductionTemporal(values["temporal-name"]!, temporalPort, uiPort, nodes);
  } else if (await portOpen(temporalPort)) {
    logger.warn(`something already listens on :${temporalPort}; using it as the Temporal server`);
  } else {
    temporal = await startDevServer({
      searchAttributes: searchAttributeCliArgs(),
      port: temporalPort,
      uiPort,
      dbFile: path.join(dataDir, "temporal", "dev.db"),
      logFile: path.join(dataDir, "temporal", "server.log"),
      logger,
    });
    temporalAddress = temporal.address;
    temporalUi = temporal.uiUrl ?? temporalUi;
  }

  return { address: temporalAddress, ui: temporalUi };
}

/**
 * The key file sealing secrets at rest: SECRETS_KEY_FILE, else on the local PostgreSQL a key
 * made once per user; none on the embedded database (serve makes one in the data dir).
 */
async function secretsKeyFile(postgres: string | undefined): Promise<string | undefined> {
  // The stack stays zero-configuration on the local PostgreSQL too: its secrets are sealed
  // with a key generated once per user (that database is shared by every checkout and data
  // dir); serve generates one in the data dir itself on the embedded database.
  let keyFile = process.env.SECRETS_KEY_FILE || undefined;
  if (postgres && !keyFile) {
    keyFile = localPostgresKeyFile();
    const { created } = await ensureKeyFile(keyFile);
    logger.warn(
      { file: keyFile },
      `secrets at rest are sealed with a local key ${created ? "generated now" : "generated earlier"}; for anything beyond a local stack make a key file (docs/webhooks/security.md#secrets-at-rest) and set SECRETS_KEY_FILE`,
    );
  }
  return keyFile;
}

/** The stack's own processes, each with its health URL and the line that describes it. */
function stackServices(
  values: StackArgs,
  at: {
    apiPort: number;
    dataDir: string;
    temporalAddress: string;
    postgres?: string | undefined;
    keyFile?: string | undefined;
    redis: boolean;
  },
): Service[] {
  const { apiPort, dataDir, temporalAddress, postgres, keyFile, redis } = at;
  const [ratelimitPort, ratelimitGrpcPort, ratelimitDebugPort, entityPort] = [
    values["ratelimit-port"],
    values["ratelimit-grpc-port"],
    values["ratelimit-debug-port"],
    values["entity-port"],
  ].map(Number);
  const cmd = (name: string) => fromRoot("dist", "cmd", `${name}.js`);
  return [
    {
      name: "webhooks",
      args: [
        cmd("webhooks"),
        "serve",
        "--worker",
        "--auto-migrate",
        // A local stack's receivers are local too (a deployment keeps the default: denied).
        "--egress-allow-private",
        "--listen",
        `127.0.0.1:${apiPort}`,
        "--data-dir",
        dataDir,
        "--temporal-address",
        temporalAddress,
        ...(postgres ? ["--storage-sqldb-conn-string", postgres] : []),
        ...(keyFile ? ["--secrets-key-file", keyFile] : []),
      ],
      health: `http://127.0.0.1:${apiPort}/_healthcheck`,
      describe: `Webhooks API + worker   http://127.0.0.1:${apiPort}  (/_healthcheck, /openapi.json, /metrics)`,
    },
    {
      name: "ratelimit",
      args: [cmd("ratelimit")],
      env: {
        HOST: "127.0.0.1",
        PORT: String(ratelimitPort),
        GRPC_HOST: "127.0.0.1",
        GRPC_PORT: String(ratelimitGrpcPort),
        DEBUG_HOST: "127.0.0.1",
        DEBUG_PORT: String(ratelimitDebugPort),
        RUNTIME_ROOT: fromRoot("ratelimit", "examples"),
        ...(redis ? { KVSTORE_URL: "127.0.0.1:6379" } : { BACKEND_TYPE: "memory" }),
      },
      health: `http://127.0.0.1:${ratelimitPort}/healthcheck`,
      describe: `Rate limit service      gRPC 127.0.0.1:${ratelimitGrpcPort}, HTTP http://127.0.0.1:${ratelimitPort} (/json, /healthcheck), debug :${ratelimitDebugPort}; ${redis ? "Redis counters" : "in-memory counters"}, rules in ratelimit/examples/config`,
    },
    ...(postgres
      ? [
          {
            name: "entity-server",
            args: [
              cmd("entity-server"),
              "--listen",
              `127.0.0.1:${entityPort}`,
              "--storage-sqldb-conn-string",
              postgres,
            ],
            health: `http://127.0.0.1:${entityPort}/_healthcheck`,
            describe: `Entity server           http://127.0.0.1:${entityPort}  (read-only: /config.json, /attempt.xml)`,
          },
        ]
      : []),
  ];
}

async function main(): Promise<void> {
  const values = parseStackArgs();
  if (values.help) {
    process.stdout.write(`${HELP}\n`);
    return;
  }
  const dataDir = path.resolve(values["data-dir"]!);
  await mkdir(path.join(dataDir, "temporal"), { recursive: true });
  process.on("SIGINT", () => void stop(0));
  process.on("SIGTERM", () => void stop(0));
  const started = Date.now();

  const apiPort = Number(values["api-port"]);
  const { address: temporalAddress, ui: temporalUi } = await startTemporal(values, dataDir);
  const postgres = (await portOpen(5432))
    ? "postgresql://webhooks:webhooks@127.0.0.1:5432/webhooks"
    : undefined;
  const keyFile = await secretsKeyFile(postgres);
  const redis = await portOpen(6379);
  const services = stackServices(values, { apiPort, dataDir, temporalAddress, postgres, keyFile, redis });
  if (!postgres)
    logger.warn(
      "entity-server not started: the embedded database admits one process; run scripts/setup.sh for PostgreSQL",
    );
  for (const service of services) {
    const child = startService(service);
    await waitHealthy(service, child);
  }

  const portal = await defaultTenantPortal(`http://127.0.0.1:${apiPort}`);
  const lines = [
    `stack ready in ${((Date.now() - started) / 1000).toFixed(1)} s (Ctrl-C stops it)`,
    `  Temporal frontend       ${temporalAddress}${values.temporal === "server" ? ` (production server, ${values["temporal-nodes"]} node(s), PostgreSQL databases ${values["temporal-name"]}, ${values["temporal-name"]}_visibility)` : ""}`,
    `  Temporal Web UI         ${temporalUi}`,
    `  Database                ${postgres ? redact(postgres) : `embedded PGlite in ${dataDir}/pglite`}`,
    "  NATS JetStream          nats://127.0.0.1:4222",
    ...services.map((s) => `  ${s.describe}`),
    `  Consumer portal         ${portal}`,
  ];
  process.stderr.write(`\n${lines.join("\n")}\n\n`);
}

/**
 * A portal session of the default tenant, valid 24 h (a working day of trying the page out,
 * the longest a session may last); or why there is none, without stopping the stack.
 */
async function defaultTenantPortal(api: string): Promise<string> {
  try {
    const res = await fetch(`${api}/tenants/uid:default/portal-sessions`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ expiresIn: "24h" }),
    });
    const body = (await res.json()) as { url?: string; errorMessage?: string };
    if (res.status !== 201 || !body.url) return `no session: ${res.status} ${body.errorMessage ?? ""}`;
    return `${body.url}  (default tenant, valid 24 h)`;
  } catch (err) {
    return `no session: ${(err as Error).message}`;
  }
}

main().catch((err: Error) => {
  logger.error({ err: err.message }, "the stack did not start");
  void stop(1);
});
