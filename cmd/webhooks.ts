import path from "node:path";
import { Command, Option } from "commander";
import { runServe } from "../api/serve.js";
import { formatDuration } from "../common/duration.js";
import { boolArg, nonNegativeDurationArg, positiveIntArg } from "../common/flags.js";
import { isLoopback } from "../common/http-server.js";
import { fromRoot } from "../common/paths.js";
import { VERSION } from "../common/version.js";
import type { WebhooksOptions } from "../core/options.js";
import { newKeyLine } from "../core/secrets-key-file.js";
import { runRekey } from "../core/secrets-rekey.js";
import { runWorker } from "../workers/run-worker.js";
import { secretsKeyFileOption } from "./secrets-options.js";
import { addSharedOptions } from "./webhooks-flags.js";

// `webhooks serve | worker | version`: the delivery service's command line.
// The flags serve and worker share are in webhooks-flags.ts.

type Flags = Record<string, unknown>;

/** Typed reads of the parsed flags: `opt` as is, `str` with "" as absent. */
function readers(o: Flags) {
  return {
    opt: <T>(k: string) => o[k] as T,
    str: (k: string) => (o[k] as string | undefined) || undefined,
  };
}

function toWebhooksOptions(o: Flags, worker: boolean): WebhooksOptions {
  const { opt, str } = readers(o);
  return {
    listen: opt("listen"),
    worker,
    logLevel: opt("logLevel"),
    dataDir: opt("dataDir"),
    autoMigrate: Boolean(o.autoMigrate),
    ...(str("storageSqldbConnString") ? { storageSqldbConnString: str("storageSqldbConnString") } : {}),
    ...(str("secretsKeyFile") ? { secretsKeyFile: path.resolve(str("secretsKeyFile")!) } : {}),
    insecurePlaintextSecrets: o.insecurePlaintextSecrets === true,
    storagePoolSize: opt("storageSqldbPoolSize"),
    storageConnectTimeout: opt("storageSqldbConnectTimeout"),
    storageStatementTimeout: opt("storageSqldbStatementTimeout"),
    reconcileEvery: opt("retryPeriod"),
    reconcileBatchSize: opt("retryBatchSize"),
    recoveryRate: opt("recoveryRate"),
    autoDeactivateAfter: opt("autoDeactivateAfter"),
    tracing: {
      enabled: o.tracing === true,
      exporterProtocol: opt("tracingProtocol"),
      serviceName: opt("tracingServiceName"),
      samplingRate: opt("tracingSamplingRate"),
    },
    reconcileGrace: opt("reconcileGrace"),
    minBackoffDelay: opt("minBackoffDelay"),
    maxBackoffDelay: opt("maxBackoffDelay"),
    abortAfter: opt("abortAfter"),
    maxAttempts: opt("maxAttempts"),
    sendTimeout: opt("sendTimeout"),
    signatureHeaders: opt("signatureHeaders"),
    shutdownGrace: opt("shutdownGrace"),
    enforceEventSchemas: o.enforceEventSchemas === true,
    retentionPeriod: opt("retentionPeriod"),
    retentionSuccessDelay: opt("retentionSuccessDelay"),
    retentionFailedDelay: opt("retentionFailedDelay"),
    retentionDeadLetterDelay: opt("retentionDeadLetterDelay"),
    ...brokerSettings(o),
    temporal: temporalSettings(o),
    taskQueue: opt("taskQueue"),
    taskQueues: opt("taskQueues"),
    ...workerDeploymentSettings(o),
    consume: o.consume !== false,
    maxConcurrentSends: opt("maxConcurrentSends"),
    maxConcurrentWorkflowTasks: opt("maxConcurrentWorkflowTasks"),
    maxDeliveriesInFlight: opt("maxDeliveriesInFlight"),
    sendMode: opt("sendMode"),
    localSendBudget: opt("localSendBudget"),
    eagerStart: o.eagerStart !== false,
    ...(o.maxCachedWorkflows ? { maxCachedWorkflows: opt("maxCachedWorkflows") } : {}),
    temporalSdkMetrics: o.temporalSdkMetrics !== false,
    taskQueueStatsInterval: opt("taskQueueStatsInterval"),
    deliveryLatencyTenants: opt("deliveryLatencyTenants"),
    ...(str("ratelimitAddr") ? { ratelimitAddr: str("ratelimitAddr") } : {}),
    ratelimitDomain: opt("ratelimitDomain"),
    egress: {
      denyPrivate: Boolean(o.egressDenyPrivate) || !o.egressAllowPrivate,
      allow: opt<string[]>("egressAllow"),
      deny: opt<string[]>("egressDeny"),
    },
    auditTopic: opt("auditTopic"),
    portal: {
      frameAncestors: opt("portalFrameAncestors"),
      logoHosts: opt("portalLogoHosts"),
      baseUrl: str("portalBaseUrl"),
      assetsDir: path.resolve(opt<string>("portalAssetsDir")),
    },
    ...authSettings(o),
    quotas: {
      configs: opt("tenantMaxConfigs"),
      portalSessions: opt("tenantMaxPortalSessions"),
      recoveries: opt("tenantMaxRecoveries"),
      testSends: opt("tenantMaxTestSends"),
      testSendsPerConfig: opt("configMaxTestSends"),
    },
  };
}

type BrokerSettings = Pick<
  WebhooksOptions,
  | "broker"
  | "brokerTopics"
  | "redelivery"
  | "deadLetterSpool"
  | "natsUrl"
  | "natsAuth"
  | "natsStream"
  | "natsStreamLimits"
  | "natsConsumer"
  | "natsPartitions"
  | "kafkaBrokers"
  | "kafkaConsumerGroup"
>;

/** The broker, its redeliveries and dead letters, and the NATS or Kafka connection. */
function brokerSettings(o: Flags): BrokerSettings {
  const { opt, str } = readers(o);
  return {
    broker: opt("broker"),
    brokerTopics: opt("brokerTopics"),
    redelivery: {
      maxBrokerDeliveries: opt("brokerMaxDeliveries"),
      backoffMs: opt("brokerRedeliveryBackoff"),
      stuckAfterMs: opt("brokerStuckAfter"),
    },
    deadLetterSpool: path.resolve(
      str("deadLetterSpool") ?? path.join(opt<string>("dataDir"), "dead-letter-spool"),
    ),
    natsUrl: opt("natsUrl"),
    natsAuth: {
      user: str("natsUser"),
      password: str("natsPassword"),
      token: str("natsToken"),
      credsFile: str("natsCreds"),
    },
    natsStream: opt("natsStream"),
    natsStreamLimits: {
      maxAgeMs: opt("natsStreamMaxAge"),
      maxBytes: opt("natsStreamMaxBytes"),
      maxMsgs: opt("natsStreamMaxMsgs"),
    },
    natsConsumer: opt("natsConsumer"),
    natsPartitions: opt("natsPartitions"),
    kafkaBrokers: opt("kafkaBrokers"),
    kafkaConsumerGroup: opt("kafkaConsumerGroup"),
  };
}

function temporalSettings(o: Flags): WebhooksOptions["temporal"] {
  const { opt, str } = readers(o);
  return {
    address: opt<string>("temporalAddress"),
    namespace: opt<string>("temporalNamespace"),
    tls: Boolean(o.temporalTls),
    ...(str("temporalTlsCert") ? { tlsCert: str("temporalTlsCert") } : {}),
    ...(str("temporalTlsKey") ? { tlsKey: str("temporalTlsKey") } : {}),
    ...(str("temporalTlsCa") ? { tlsCa: str("temporalTlsCa") } : {}),
    ...(str("temporalTlsServerName") ? { tlsServerName: str("temporalTlsServerName") } : {}),
    ...(str("temporalApiKey") ? { apiKey: str("temporalApiKey") } : {}),
  };
}

/** Worker Versioning, on when --worker-deployment-name is given (a build id alone is a mistake, said so). */
function workerDeploymentSettings(o: Flags): Pick<WebhooksOptions, "workerDeployment"> {
  const { str } = readers(o);
  const name = str("workerDeploymentName");
  const buildId = str("workerBuildId");
  if (!name && buildId)
    throw new Error(
      "--worker-build-id (TEMPORAL_WORKER_BUILD_ID) needs --worker-deployment-name (TEMPORAL_DEPLOYMENT_NAME): without a deployment the workers are unversioned",
    );
  return name ? { workerDeployment: { name, ...(buildId ? { buildId } : {}) } } : {};
}

/** Bearer-token auth, on when --auth-jwks-url is given. */
function authSettings(o: Flags): Pick<WebhooksOptions, "auth"> {
  const { opt, str } = readers(o);
  const jwksUrl = str("authJwksUrl");
  if (!jwksUrl) return {};
  return {
    auth: {
      jwksUrl: checkUrl("--auth-jwks-url", jwksUrl),
      issuer: str("authIssuer"),
      audience: str("authAudience"),
      readScope: opt<string>("authReadScope"),
      writeScope: opt<string>("authWriteScope"),
      tenantClaim: opt<string>("authTenantClaim"),
      requireTenantClaim: o.authRequireTenantClaim === true,
      adminScope: opt<string>("authAdminScope"),
    },
  };
}

function checkUrl(flag: string, value: string): string {
  try {
    return new URL(value).toString();
  } catch {
    throw new Error(`${flag} must be an absolute URL, got "${value}"`);
  }
}

function checkPartitions(s: WebhooksOptions): void {
  if (s.natsPartitions === 1 || !s.worker || !s.consume) return;
  if (s.broker !== "nats")
    throw new Error(
      "--nats-partitions applies to --broker nats (Kafka keeps a key's order through its own partitions)",
    );
  if (!s.storageSqldbConnString)
    throw new Error(
      "--nats-partitions needs PostgreSQL (--storage-sqldb-conn-string): its partitions' owners hold locks there",
    );
}

function checkPolicy(s: WebhooksOptions): void {
  checkPartitions(s);
  if (s.maxBackoffDelay < s.minBackoffDelay) {
    throw new Error(
      `--max-backoff-delay (${formatDuration(s.maxBackoffDelay)}) is shorter than --min-backoff-delay (${formatDuration(s.minBackoffDelay)})`,
    );
  }
}

/** An API that checks no token answers only this machine, unless the operator says otherwise. */
function checkAuthBeyondLoopback(s: WebhooksOptions, insecure: boolean): void {
  if (s.auth || insecure || isLoopback(s.listen.host)) return;
  throw new Error(
    `--listen ${s.listen.host} reaches beyond this machine without authentication: pass --auth-jwks-url (bearer tokens), listen on 127.0.0.1, or accept an open API with --insecure-no-auth`,
  );
}

function checkProcesses(s: WebhooksOptions): void {
  if ((s.processes ?? 1) === 1) return;
  if (s.worker)
    throw new Error(
      "--processes serves the API only: run the delivery worker as separate `webhooks worker` processes",
    );
  if (!s.storageSqldbConnString)
    throw new Error(
      "--processes needs PostgreSQL (--storage-sqldb-conn-string): the embedded database serves one process",
    );
}

/** `webhooks serve`: the API, optionally the worker in the same process. */
function serveCommand(program: Command): void {
  addSharedOptions(
    program
      .command("serve")
      .description(
        "serve the configs REST API (with --worker, also run the delivery worker in this process)",
      ),
  )
    .option("--worker", "also run the worker inside serve", false)
    .addOption(
      new Option(
        "--processes <n>",
        "processes serving the API on the one port (one per core to use them all)",
      )
        .default(1)
        .argParser(positiveIntArg),
    )
    .addOption(
      new Option(
        "--insecure-no-auth [on]",
        "serve the API without authentication on a listen address beyond loopback (refused otherwise)",
      )
        .preset("true")
        .argParser(boolArg)
        .default(false)
        .env("INSECURE_NO_AUTH"),
    )
    .action(async (o: Flags) => {
      const options = { ...toWebhooksOptions(o, Boolean(o.worker)), processes: o.processes as number };
      checkPolicy(options);
      checkProcesses(options);
      checkAuthBeyondLoopback(options, o.insecureNoAuth === true);
      await runServe(options);
    });
}

async function main(argv: string[]): Promise<void> {
  const program = new Command("webhooks")
    .description("Webhook delivery: configs API, broker consumer and durable Temporal delivery workflows")
    .version(VERSION, "-v, --version", "print the version")
    .showHelpAfterError("(run with --help for usage)")
    .configureOutput({ outputError: (text, write) => write(text) });

  serveCommand(program);

  addSharedOptions(
    program
      .command("worker")
      .description("consume events and run delivery workflows; serves only /_healthcheck"),
  ).action(async (o: Flags) => {
    const options = toWebhooksOptions(o, true);
    checkPolicy(options);
    await runWorker(options);
  });

  const secrets = program
    .command("secrets")
    .description("signing secrets sealed at rest: make keys, move every secret to the newest key");
  secrets
    .command("rekey")
    .description(
      "re-seal every config secret under the newest key of --secrets-key-file, in batches; safe while the service runs, and run again to resume",
    )
    .addOption(
      new Option(
        "--storage-sqldb-conn-string <url>",
        "PostgreSQL connection string (default: embedded PGlite database)",
      ).env("DATABASE_URL"),
    )
    .addOption(
      new Option(
        "--data-dir <dir>",
        "folder of the embedded database (when no connection string is given)",
      ).default(fromRoot(".data")),
    )
    .addOption(secretsKeyFileOption().makeOptionMandatory())
    .addOption(new Option("--batch-size <n>", "configs per batch").default(100).argParser(positiveIntArg))
    .addOption(
      new Option("--pause <duration>", "wait between batches, to spare a busy database")
        .default(0, "0")
        .argParser(nonNegativeDurationArg),
    )
    .action(async (o: Flags) => {
      if (!o.secretsKeyFile)
        throw new Error("rekey needs the key ring: --secrets-key-file FILE or SECRETS_KEY_FILE");
      await runRekey({
        keyFile: path.resolve(o.secretsKeyFile as string),
        connString: (o.storageSqldbConnString as string | undefined) || undefined,
        dataDir: o.dataDir as string,
        batchSize: o.batchSize as number,
        pauseMs: o.pause as number,
      });
    });
  secrets
    .command("new-key")
    .description(
      "print a new key line to append to a key file (`>> FILE`; the appended key seals new writes)",
    )
    .option("--id <id>", "key id (default: k + the UTC time)")
    .action((o: { id?: string }) => {
      process.stdout.write(`${newKeyLine(o.id)}\n`);
    });

  program
    .command("version")
    .description("print the service version")
    .action(() => {
      process.stdout.write(`${VERSION}\n`);
    });

  await program.parseAsync(argv);
}

main(process.argv).catch((err: Error) => {
  process.stderr.write(`webhooks: ${err.message}\n`);
  process.exit(1);
});
