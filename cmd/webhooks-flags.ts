import { type Command, InvalidArgumentError, Option } from "commander";
import {
  boolArg,
  boundedIntArg,
  bytesArg,
  durationArg,
  durationListArg,
  listOption,
  nonNegativeDurationArg,
  nonNegativeIntArg,
  positiveDurationArg,
  positiveIntArg,
  rateArg,
} from "../common/flags.js";
import { fromRoot } from "../common/paths.js";
import { addServiceOptions } from "../common/service-options.js";
import { MAX_PARTITIONS } from "../core/broker/partitions.js";
import { parseCidr } from "../core/egress-policy.js";
import { SIGNATURE_HEADER_STYLES } from "../core/options.js";
import { versionPartProblem } from "../workers/worker-versioning.js";
import { insecurePlaintextSecretsOption, secretsKeyFileOption } from "./secrets-options.js";

// The flags `webhooks serve` and `webhooks worker` share, one function per group, in the
// order `--help` lists them. Specified flags keep their names and defaults
// (docs/spec-rules.md#webhook-flags); Temporal and broker flags are ours.

const d = (text: string) => durationArg(text);
const TOPICS = listOption(["default"]);
const KAFKA_BROKERS = listOption(["127.0.0.1:9092"]);
const QUEUES = listOption(["workflows", "sends", "maintenance"]);
const NO_CIDRS = listOption([]);

/** A comma-separated, repeatable list of CIDRs, each checked as it is parsed. */
const cidrList = (value: string, previous: string[]): string[] => {
  const cidrs = NO_CIDRS.parse(value, previous);
  for (const c of cidrs) {
    try {
      parseCidr(c);
    } catch (err) {
      throw new InvalidArgumentError((err as Error).message);
    }
  }
  return cidrs;
};
const REDELIVERY_BACKOFF = "5s,30s,2m,10m,30m";
/**
 * --max-attempts at most: a delivery's runs carry the attempts so far (some 250 bytes each)
 * when they continue as new, and 1 000 keeps that well inside the 1 MiB a run may grow to.
 */
const MAX_ATTEMPTS_BOUND = 1000;

/** Adds every shared flag, group by group (the order is the one `--help` shows). */
export function addSharedOptions(cmd: Command): Command {
  const groups = [
    storageFlags,
    reconciliationFlags,
    retryPolicyFlags,
    retentionFlags,
    brokerFlags,
    natsFlags,
    kafkaFlags,
    temporalFlags,
    egressFlags,
    rateLimitFlags,
    tracingFlags,
    metricsFlags,
    throughputFlags,
    eventFlags,
    secretsFlags,
    authFlags,
    portalFlags,
    quotaFlags,
  ];
  return groups.reduce((c, addGroup) => addGroup(c), addServiceOptions(cmd, ":8080"));
}

/** The database: pool size and how long connections and statements may take. */
function storageFlags(cmd: Command): Command {
  return cmd
    .addOption(
      new Option("--storage-sqldb-pool-size <n>", "database connections per process")
        .default(10)
        .argParser(positiveIntArg),
    )
    .addOption(
      new Option(
        "--storage-sqldb-connect-timeout <duration>",
        "how long a query waits for a database connection, new or free (0 waits forever)",
      )
        .default(d("10s"), "10s")
        .argParser(nonNegativeDurationArg),
    )
    .addOption(
      new Option(
        "--storage-sqldb-statement-timeout <duration>",
        "the database cancels a statement running longer (0: no limit; migrations are not bounded)",
      )
        .default(d("30s"), "30s")
        .argParser(nonNegativeDurationArg),
    );
}

/** Reconciliation of overdue rows, bulk recovery and automatic deactivation. */
function reconciliationFlags(cmd: Command): Command {
  return cmd
    .addOption(
      new Option(
        "--retry-period <duration>",
        "reconciliation tick: overdue queued deliveries are checked against their workflows",
      )
        .default(d("3s"), "3s")
        .argParser(positiveDurationArg),
    )
    .addOption(
      new Option("--retry-batch-size <n>", "queued rows reconciliation checks per tick")
        .default(50)
        .argParser(positiveIntArg),
    )
    .addOption(
      new Option(
        "--recovery-rate <n>",
        "replays a bulk recovery (POST /configs/{id}/recover) starts per second, so new deliveries keep their capacity",
      )
        .default(20)
        .argParser(positiveIntArg),
    )
    .addOption(
      new Option(
        "--auto-deactivate-after <duration>",
        "deactivate a config whose sends have all failed for this long (0: never)",
      )
        .default(0, "0")
        .argParser(durationArg),
    )
    .addOption(
      new Option(
        "--reconcile-grace <duration>",
        "how long past its retry time a queued row waits before reconciliation checks its workflow",
      )
        .default(d("1m"), "1m")
        .argParser(durationArg),
    );
}

/** A delivery's retry policy, the bounds of one send and its signing headers' names. */
function retryPolicyFlags(cmd: Command): Command {
  return cmd
    .addOption(
      new Option("--min-backoff-delay <duration>", "first backoff delay")
        .default(d("1m"), "1m")
        .argParser(positiveDurationArg),
    )
    .addOption(
      new Option("--max-backoff-delay <duration>", "backoff cap")
        .default(d("1h"), "1h")
        .argParser(positiveDurationArg),
    )
    .addOption(
      new Option("--abort-after <duration>", "mark failed after retrying this long")
        .default(d("10h"), "10h")
        .argParser(positiveDurationArg),
    )
    .addOption(
      new Option("--max-attempts <n>", "cap on attempts per webhook (at most 1000)")
        .default(15)
        .argParser(boundedIntArg(MAX_ATTEMPTS_BOUND, "each run of a delivery carries its attempts so far")),
    )
    .addOption(
      new Option("--send-timeout <duration>", "timeout of one HTTP send (connect to end of answer)")
        .default(d("30s"), "30s")
        .argParser(positiveDurationArg),
    )
    .addOption(
      new Option(
        "--signature-headers <style>",
        "names of the signing headers for configs that set none (signatureHeaders): svc (svc-webhook-id, -timestamp, -signature) or standard (webhook-id, -timestamp, -signature, as Standard Webhooks names them)",
      )
        .choices(SIGNATURE_HEADER_STYLES)
        .default("svc")
        .env("SIGNATURE_HEADERS"),
    )
    .addOption(
      new Option(
        "--shutdown-grace <duration>",
        "on SIGTERM/SIGINT, how long in-flight sends may take to finish before they are cut off",
      )
        .default(d("30s"), "30s")
        .argParser(positiveDurationArg),
    );
}

/** How long attempt rows are kept. */
function retentionFlags(cmd: Command): Command {
  return cmd
    .addOption(
      new Option("--retention-period <duration>", "interval of the attempts cleanup")
        .default(d("1h"), "1h")
        .argParser(positiveDurationArg),
    )
    .addOption(
      new Option(
        "--retention-success-delay <duration>",
        "age at which success rows are purged (0 keeps them)",
      )
        .default(d("720h"), "720h")
        .argParser(durationArg),
    )
    .addOption(
      new Option("--retention-failed-delay <duration>", "age at which failed rows are purged (0 keeps them)")
        .default(d("2160h"), "2160h")
        .argParser(durationArg),
    )
    .addOption(
      new Option(
        "--retention-dead-letter-delay <duration>",
        "age since their last change at which dead letters are purged, replayed or not (0 keeps them)",
      )
        .default(d("720h"), "720h")
        .argParser(durationArg),
    );
}

/** The event broker, its topics, redeliveries and the dead-letter spool. */
function brokerFlags(cmd: Command): Command {
  return cmd
    .addOption(
      new Option("--broker <type>", "event broker").choices(["nats", "kafka"]).default("nats").env("BROKER"),
    )
    .addOption(
      new Option("--broker-topics <topics>", "topics (NATS subjects) to consume, comma-separated or repeated")
        .default(TOPICS.defaults, "default")
        .argParser(TOPICS.parse),
    )
    .addOption(
      new Option(
        "--broker-max-deliveries <n>",
        "deliveries of a message whose deliveries cannot start yet (Temporal or the database unavailable) before it goes to the dead-letter store",
      )
        .default(6)
        .argParser(positiveIntArg),
    )
    .addOption(
      new Option(
        "--broker-redelivery-backoff <durations>",
        "waits before the 2nd, 3rd, ... delivery of such a message, comma-separated; the last repeats",
      )
        .default(durationListArg(REDELIVERY_BACKOFF), REDELIVERY_BACKOFF)
        .argParser(durationListArg),
    )
    .addOption(
      new Option(
        "--broker-stuck-after <duration>",
        "health fails when messages wait for the consumer and it settled none for this long (0: never)",
      )
        .default(d("1m"), "1m")
        .argParser(nonNegativeDurationArg),
    )
    .addOption(
      new Option(
        "--dead-letter-spool <dir>",
        "folder where dead letters the store refuses are parked until it accepts them (default: <data-dir>/dead-letter-spool)",
      ),
    );
}

/** NATS: connection, credentials, the stream of the topics and its consumer. */
function natsFlags(cmd: Command): Command {
  return cmd
    .addOption(
      new Option("--nats-url <url>", "NATS server URL").default("nats://127.0.0.1:4222").env("NATS_URL"),
    )
    .addOption(new Option("--nats-user <user>", "NATS user (with --nats-password)").env("NATS_USER"))
    .addOption(new Option("--nats-password <password>", "NATS password").env("NATS_PASSWORD"))
    .addOption(new Option("--nats-token <token>", "NATS authentication token").env("NATS_TOKEN"))
    .addOption(
      new Option("--nats-creds <file>", "NATS credentials file (JWT and NKey seed)").env("NATS_CREDS"),
    )
    .addOption(
      new Option(
        "--nats-stream <name>",
        "JetStream stream holding the topics (created when missing)",
      ).default("WEBHOOKS"),
    )
    .addOption(
      new Option(
        "--nats-stream-max-age <duration>",
        "the stream of the topics drops messages older than this (0: kept until a size limit)",
      )
        .default(d("168h"), "168h")
        .argParser(nonNegativeDurationArg),
    )
    .addOption(
      new Option(
        "--nats-stream-max-bytes <size>",
        "the stream of the topics drops its oldest messages beyond this size, e.g. 1GiB, 500MB (0: no limit)",
      )
        .default(bytesArg("1GiB"), "1GiB")
        .argParser(bytesArg),
    )
    .addOption(
      new Option(
        "--nats-stream-max-msgs <n>",
        "the stream of the topics drops its oldest messages beyond this count (0: no limit)",
      )
        .default(0)
        .argParser(nonNegativeIntArg),
    )
    .addOption(new Option("--nats-consumer <name>", "durable JetStream consumer name").default("webhooks"))
    .addOption(
      new Option(
        "--nats-partitions <n>",
        "split the events among the consuming processes by (tenant, ordering key), each partition consumed by one process at a time, so that one key's order holds across processes; at most this many processes share the consuming (1: one consumer shared by all, no order across processes; needs PostgreSQL)",
      )
        .default(1)
        .argParser(boundedIntArg(MAX_PARTITIONS, "each partition's consumer reads the whole stream"))
        .env("NATS_PARTITIONS"),
    );
}

/** Kafka: bootstrap brokers and consumer group. */
function kafkaFlags(cmd: Command): Command {
  return cmd
    .addOption(
      new Option("--kafka-brokers <hosts>", "Kafka bootstrap brokers, comma-separated")
        .default(KAFKA_BROKERS.defaults, "127.0.0.1:9092")
        .argParser(KAFKA_BROKERS.parse)
        .env("KAFKA_BROKERS"),
    )
    .addOption(new Option("--kafka-consumer-group <name>", "Kafka consumer group").default("webhooks"));
}

/** Temporal: connection, TLS and the task queues this process polls. */
function temporalFlags(cmd: Command): Command {
  return cmd
    .addOption(
      new Option("--temporal-address <host:port>", "Temporal frontend")
        .default("127.0.0.1:7233")
        .env("TEMPORAL_ADDRESS"),
    )
    .addOption(
      new Option("--temporal-namespace <name>", "Temporal namespace")
        .default("default")
        .env("TEMPORAL_NAMESPACE"),
    )
    .addOption(
      new Option("--temporal-tls [on]", "connect to Temporal over TLS")
        .preset("true")
        .argParser(boolArg)
        .default(false)
        .env("TEMPORAL_TLS"),
    )
    .addOption(new Option("--temporal-tls-cert <file>", "client certificate (mTLS)").env("TEMPORAL_TLS_CERT"))
    .addOption(new Option("--temporal-tls-key <file>", "client private key (mTLS)").env("TEMPORAL_TLS_KEY"))
    .addOption(new Option("--temporal-tls-ca <file>", "CA certificate of the server").env("TEMPORAL_TLS_CA"))
    .addOption(
      new Option("--temporal-tls-server-name <name>", "server name to verify (SNI override)").env(
        "TEMPORAL_TLS_SERVER_NAME",
      ),
    )
    .addOption(new Option("--temporal-api-key <key>", "API key (Temporal Cloud)").env("TEMPORAL_API_KEY"))
    .addOption(
      new Option("--task-queue <name>", "Temporal task queue of delivery workflows").default("webhooks"),
    )
    .addOption(
      new Option(
        "--task-queues <queues>",
        "queues this process polls: workflows (<task-queue>), sends (<task-queue>-sends), maintenance (<task-queue>-maintenance)",
      )
        .default(QUEUES.defaults, "workflows,sends,maintenance")
        .argParser((v, prev: string[]) => {
          const queues = QUEUES.parse(v, prev);
          const bad = queues.find((q) => !QUEUES.defaults.includes(q));
          if (bad)
            throw new InvalidArgumentError(
              `unknown queue "${bad}"; expected workflows, sends or maintenance`,
            );
          return [...new Set(queues)];
        }),
    )
    .addOption(
      new Option(
        "--worker-deployment-name <name>",
        "Worker Versioning: the workers poll as a version (this name and --worker-build-id) of this Temporal Worker Deployment; unversioned when absent",
      )
        .argParser(versionPartArg("deployment name"))
        .env("TEMPORAL_DEPLOYMENT_NAME"),
    )
    .addOption(
      new Option(
        "--worker-build-id <id>",
        "the build id of that version (needs --worker-deployment-name; default: the hash of this build's workflow bundle, a release's build-id file)",
      )
        .argParser(versionPartArg("build id"))
        .env("TEMPORAL_WORKER_BUILD_ID"),
    );
}

/** A deployment name or build id as the server takes it (workers/worker-versioning.ts). */
const versionPartArg = (kind: "deployment name" | "build id") => (value: string) => {
  const problem = versionPartProblem(kind, value);
  if (problem) throw new InvalidArgumentError(problem);
  return value;
};

/** Which addresses sends may reach. */
function egressFlags(cmd: Command): Command {
  return cmd
    .addOption(
      new Option(
        "--egress-allow-private [on]",
        "allow sends to private, loopback and shared address ranges (local receivers; denied by default)",
      )
        .preset("true")
        .argParser(boolArg)
        .default(false)
        .env("EGRESS_ALLOW_PRIVATE"),
    )
    .addOption(
      new Option(
        "--egress-deny-private",
        "deprecated: denying private ranges is the default now (the flag wins over --egress-allow-private)",
      ).default(false),
    )
    .addOption(
      new Option(
        "--egress-allow <cidrs>",
        "only send to these address ranges (comma-separated or repeated; link-local, metadata and unspecified addresses stay denied)",
      )
        .default(NO_CIDRS.defaults, "any")
        .argParser(cidrList),
    )
    .addOption(
      new Option("--egress-deny <cidrs>", "never send to these address ranges (comma-separated or repeated)")
        .default(NO_CIDRS.defaults, "none")
        .argParser(cidrList),
    );
}

/** The rate limit service asked before each send. */
function rateLimitFlags(cmd: Command): Command {
  return cmd
    .addOption(
      new Option("--ratelimit-addr <host:port>", "rate limit service (gRPC) asked before each send").env(
        "RATELIMIT_ADDR",
      ),
    )
    .addOption(new Option("--ratelimit-domain <domain>", "domain of those requests").default("webhooks"));
}

/** OpenTelemetry export. */
function tracingFlags(cmd: Command): Command {
  return cmd
    .addOption(
      new Option(
        "--tracing [on]",
        "export OpenTelemetry spans of every delivery over OTLP (destination: OTEL_EXPORTER_OTLP_* variables)",
      )
        .preset("true")
        .argParser(boolArg)
        .default(false)
        .env("TRACING_ENABLED"),
    )
    .addOption(
      new Option("--tracing-protocol <protocol>", "OTLP over http or grpc")
        .choices(["http", "grpc"])
        .default("http")
        .env("TRACING_EXPORTER_PROTOCOL"),
    )
    .addOption(
      new Option("--tracing-service-name <name>", "service.name of the spans")
        .default("webhooks")
        .env("TRACING_SERVICE_NAME"),
    )
    .addOption(
      new Option(
        "--tracing-sampling-rate <rate>",
        "share of new traces recorded, 0 to 1 (an event's own decision is kept)",
      )
        .default(1)
        .argParser(rateArg)
        .env("TRACING_SAMPLING_RATE"),
    );
}

/** Task queues' stats read at most this often: each read fans out to every partition of four queues. */
const MIN_STATS_INTERVAL_MS = 1000;

/** What /metrics adds for scaling workers and the delivery SLO (docs/webhooks/scaling-workers.md). */
function metricsFlags(cmd: Command): Command {
  return cmd
    .addOption(
      new Option(
        "--temporal-sdk-metrics [on]",
        "serve the Temporal SDK's own worker metrics (temporal_*: task slots, schedule-to-start latency, sticky cache, polls) on /metrics",
      )
        .preset("true")
        .argParser(boolArg)
        .default(true)
        .env("TEMPORAL_SDK_METRICS"),
    )
    .addOption(
      new Option(
        "--task-queue-stats-interval <duration>",
        "how often one worker process reads the task queues' backlog from Temporal for /metrics (0: never)",
      )
        .default(d("10s"), "10s")
        .argParser(statsIntervalArg)
        .env("TASK_QUEUE_STATS_INTERVAL"),
    )
    .addOption(
      new Option(
        "--delivery-latency-tenants <n>",
        "tenants (the first a process sees) labeled by id on webhooks_delivery_latency_seconds; the others are labeled other",
      )
        .default(20)
        .argParser(nonNegativeIntArg)
        .env("DELIVERY_LATENCY_TENANTS"),
    );
}

function statsIntervalArg(value: string): number {
  const ms = nonNegativeDurationArg(value);
  if (ms > 0 && ms < MIN_STATS_INTERVAL_MS)
    throw new InvalidArgumentError(`expected 0 (off) or at least 1s, got "${value}"`);
  return ms;
}

/** What this process runs and how much of it at once: consuming, sends, workflow tasks. */
function throughputFlags(cmd: Command): Command {
  return cmd
    .option("--no-consume", "do not consume events from the broker (scale task queues only)")
    .addOption(
      new Option("--max-concurrent-sends <n>", "HTTP sends in flight per process")
        .default(100)
        .argParser(positiveIntArg),
    )
    .addOption(
      new Option(
        "--send-mode <mode>",
        "how new deliveries send: local-first (the first send in the workflow worker, then <task-queue>-sends past --local-send-budget or to retry), queue (always <task-queue>-sends) or local (always the workflow worker)",
      )
        .choices(["local-first", "queue", "local"])
        .default("local-first"),
    )
    .addOption(
      new Option(
        "--local-send-budget <duration>",
        "local-first: how long a first send in the workflow worker may wait for its answer before the sends queue takes over",
      )
        .default(d("1s"), "1s")
        .argParser(positiveDurationArg),
    )
    .option(
      "--no-eager-start",
      "start deliveries through the task queue even when this process runs their workflow worker",
    )
    .addOption(
      new Option(
        "--max-cached-workflows <n>",
        "deliveries kept in the worker's memory between their tasks (default: the SDK's, from the heap size)",
      ).argParser(positiveIntArg),
    )
    .addOption(
      new Option("--max-concurrent-workflow-tasks <n>", "workflow tasks run at once per process")
        .default(40)
        .argParser(positiveIntArg),
    )
    .addOption(
      new Option(
        "--max-deliveries-in-flight <n>",
        "deliveries started here with a send under way, per process; further starts wait (with eager start)",
      )
        .default(32)
        .argParser(positiveIntArg),
    );
}

/** Event schemas and the audit topic. */
function eventFlags(cmd: Command): Command {
  return cmd
    .addOption(
      new Option(
        "--enforce-event-schemas [on]",
        "refuse events whose payload fails their type's schema in the event catalog (POST /events 400, dead letter from the broker) instead of counting them",
      )
        .preset("true")
        .argParser(boolArg)
        .default(false)
        .env("ENFORCE_EVENT_SCHEMAS"),
    )
    .addOption(
      new Option(
        "--audit-topic <topic>",
        'broker topic every API call (and automatic deactivation) is published to ("" disables)',
      ).default("audit"),
    );
}

/** Signing secrets sealed at rest. */
function secretsFlags(cmd: Command): Command {
  return cmd.addOption(secretsKeyFileOption()).addOption(insecurePlaintextSecretsOption());
}

/** Bearer-token auth of the API. */
function authFlags(cmd: Command): Command {
  return cmd
    .addOption(
      new Option("--auth-jwks-url <url>", "turns on bearer-token auth: JWKS of the token issuer").env(
        "AUTH_JWKS_URL",
      ),
    )
    .addOption(new Option("--auth-issuer <iss>", "required token issuer (iss)").env("AUTH_ISSUER"))
    .addOption(new Option("--auth-audience <aud>", "required token audience (aud)").env("AUTH_AUDIENCE"))
    .addOption(new Option("--auth-read-scope <scope>", "scope for GET routes").default("webhooks:read"))
    .addOption(
      new Option("--auth-write-scope <scope>", "scope for every other route (implies read)").default(
        "webhooks:write",
      ),
    )
    .addOption(
      new Option(
        "--auth-tenant-claim <name>",
        "token claim naming the one tenant (id or uid) a token may read and change",
      )
        .env("AUTH_TENANT_CLAIM")
        .default("tenant"),
    )
    .addOption(
      new Option(
        "--auth-require-tenant-claim [on]",
        "refuse tokens without the tenant claim unless they carry the admin scope (multi-tenant deployments)",
      )
        .preset("true")
        .argParser(boolArg)
        .default(false)
        .env("AUTH_REQUIRE_TENANT_CLAIM"),
    )
    .addOption(
      new Option(
        "--auth-admin-scope <scope>",
        "scope of deployment-wide tokens under --auth-require-tenant-claim",
      )
        .env("AUTH_ADMIN_SCOPE")
        .default("webhooks:admin"),
    );
}

/** Per-tenant quotas of the API (every tenant but the default one; 0: none). */
function quotaFlags(cmd: Command): Command {
  const quota = (flag: string, env: string, help: string, value: number) =>
    new Option(`${flag} <n>`, help).env(env).default(value).argParser(nonNegativeIntArg);
  return cmd
    .addOption(quota("--tenant-max-configs", "TENANT_MAX_CONFIGS", "configs a tenant may hold", 1000))
    .addOption(
      quota(
        "--tenant-max-portal-sessions",
        "TENANT_MAX_PORTAL_SESSIONS",
        "live portal sessions per tenant",
        100,
      ),
    )
    .addOption(
      quota("--tenant-max-recoveries", "TENANT_MAX_RECOVERIES", "running bulk recoveries per tenant", 3),
    )
    .addOption(
      quota("--tenant-max-test-sends", "TENANT_MAX_TEST_SENDS", "test sends a minute per tenant", 60),
    )
    .addOption(
      quota(
        "--config-max-test-sends",
        "CONFIG_MAX_TEST_SENDS",
        "test sends a minute per config (every tenant's, the default one's too)",
        10,
      ),
    );
}

/** The consumer portal page. */
function portalFlags(cmd: Command): Command {
  return cmd
    .addOption(
      new Option(
        "--portal-frame-ancestors <sources>",
        "CSP frame-ancestors of the consumer portal page: space-separated sources allowed to embed it",
      )
        .env("PORTAL_FRAME_ANCESTORS")
        .default("'none'")
        .argParser(frameAncestorsArg),
    )
    .addOption(
      new Option(
        "--portal-logo-hosts <hosts>",
        "hosts (comma- or space-separated) a portal session's theme.logoUrl may name; https only",
      )
        .env("PORTAL_LOGO_HOSTS")
        .default([])
        .argParser(logoHostsArg),
    )
    .addOption(
      new Option(
        "--portal-base-url <url>",
        "origin (and path prefix) of the portal URLs sessions return; the request's own origin when absent",
      )
        .env("PORTAL_BASE_URL")
        .argParser(portalBaseUrlArg),
    )
    .addOption(
      new Option("--portal-assets-dir <dir>", "the built portal page served under /portal")
        .env("PORTAL_ASSETS_DIR")
        .default(fromRoot("dist", "portal")),
    );
}

/** CSP sources: printable ASCII, and no separator that would end the directive early. */
function frameAncestorsArg(value: string): string {
  const sources = value.trim().split(/\s+/);
  if (!value.trim() || sources.some((s) => !/^[!-~]+$/.test(s) || /[;,]/.test(s)))
    throw new InvalidArgumentError(
      `expected space-separated CSP sources such as "'self' https://app.example.com"`,
    );
  return sources.join(" ");
}

/** An http(s) origin with an optional path prefix, without the trailing slash. */
function portalBaseUrlArg(value: string): string {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw new InvalidArgumentError("expected an absolute URL such as https://hooks.example.com");
  }
  if (url.protocol !== "https:" && url.protocol !== "http:")
    throw new InvalidArgumentError("expected an http or https URL");
  if (url.search || url.hash || url.username || url.password)
    throw new InvalidArgumentError("expected an origin and path only (no query, fragment or credentials)");
  return `${url.origin}${url.pathname}`.replace(/\/+$/, "");
}

const HOST_RE =
  /^(?:[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?\.)*[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?(?::\d{1,5})?$/;

function logoHostsArg(value: string): string[] {
  const hosts = value.split(/[\s,]+/).filter(Boolean);
  const bad = hosts.find((h) => !HOST_RE.test(h));
  if (bad) throw new InvalidArgumentError(`"${bad}" is not a host name (with an optional :port)`);
  return hosts.map((h) => h.toLowerCase());
}
