import type { ListenAddress } from "../common/flags.js";
import type { TemporalOptions } from "../common/temporal.js";
import type { NatsAuth } from "./broker/nats-auth.js";
import type { StreamLimits } from "./broker/nats-setup.js";
import type { Redelivery } from "./broker/types.js";
import type { EgressOptions } from "./egress-policy.js";
import type { DeliveryTracingOptions } from "./tracing.js";

/**
 * The names a delivery's signature travels under (activities/signature-headers.ts): `svc`,
 * the product's svc-webhook-id/-timestamp/-signature, or `standard`, Standard Webhooks'
 * webhook-id/-timestamp/-signature. A config's own setting wins over the deployment's.
 */
export const SIGNATURE_HEADER_STYLES = ["svc", "standard"] as const;
export type SignatureHeaderStyle = (typeof SIGNATURE_HEADER_STYLES)[number];

/** How deliveries started by this process send their POSTs (see WebhooksOptions.sendMode). */
export type SendMode = "queue" | "local" | "local-first";

/** Bearer-token checks of the REST API (api/auth.ts): the JWKS, optional issuer and audience, scopes. */
export interface AuthOptions {
  jwksUrl: string;
  issuer?: string | undefined;
  audience?: string | undefined;
  readScope: string;
  writeScope: string;
  /** The claim naming a token's tenant (--auth-tenant-claim); a token without it is deployment-wide. */
  tenantClaim: string;
  /** --auth-require-tenant-claim: a token without the claim needs `adminScope` to be deployment-wide. */
  requireTenantClaim: boolean;
  adminScope: string;
}

/** Per-tenant quotas of the API (api/tenant-quotas.ts); 0 turns one off. */
export interface QuotaOptions {
  configs: number;
  portalSessions: number;
  recoveries: number;
  /** Test sends a minute per tenant. */
  testSends: number;
  /** Test sends a minute per config. */
  testSendsPerConfig: number;
}

/** The consumer portal's page and sessions (api/portal-*.ts). */
export interface PortalOptions {
  /** CSP frame-ancestors sources of the page (--portal-frame-ancestors), e.g. "'none'". */
  frameAncestors: string;
  /** Hosts a session's theme.logoUrl may name (--portal-logo-hosts); https only. */
  logoHosts: string[];
  /** Origin (and path prefix) of the URLs sessions return (--portal-base-url); the request's own when absent. */
  baseUrl?: string | undefined;
  /** Where the built page is (--portal-assets-dir, default dist/portal). */
  assetsDir: string;
}

/** Everything `./bin/webhooks serve|worker` is configured with (see cmd/webhooks.ts for flags). */
export interface WebhooksOptions {
  listen: ListenAddress;
  worker: boolean;
  /** `serve` only: processes serving the API on the one port (api/cluster.ts); 1 when absent. */
  processes?: number;
  logLevel: string;
  dataDir: string;
  autoMigrate: boolean;
  storageSqldbConnString?: string;
  /** Key ring of the secrets sealed at rest (core/secrets-startup.ts); absent: see there. */
  secretsKeyFile?: string;
  /** Store signing secrets in plain text (no key ring). */
  insecurePlaintextSecrets: boolean;
  /** Connections in the database pool. */
  storagePoolSize: number;
  /** How long a query waits for a database connection, ms (0: forever). */
  storageConnectTimeout: number;
  /** PostgreSQL statement_timeout of every pooled connection, ms (0: none). */
  storageStatementTimeout: number;
  // Delivery policy (docs/spec-rules.md#webhook-flags), durations in milliseconds.
  /** Reconciliation tick, --retry-period (workers/reconciliation.ts). */
  reconcileEvery: number;
  /** Queued rows reconciliation checks per tick, --retry-batch-size. */
  reconcileBatchSize: number;
  /** Replays a bulk recovery starts per second (workflows/recovery.ts). */
  recoveryRate: number;
  /** Deactivate configs failing for this long, ms (0: never; workers/auto-deactivation.ts). */
  autoDeactivateAfter: number;
  /** OpenTelemetry spans of deliveries (core/tracing.ts). */
  tracing: DeliveryTracingOptions;
  /** How overdue a queued row must be before reconciliation checks its workflow. */
  reconcileGrace: number;
  minBackoffDelay: number;
  maxBackoffDelay: number;
  abortAfter: number;
  maxAttempts: number;
  /**
   * Timeout of one HTTP send (30 s as specified, docs/spec-rules.md#send-timeout; a flag lets
   * operators tighten it).
   */
  sendTimeout: number;
  /** --signature-headers: the names of the signature headers for configs that set none. */
  signatureHeaders: SignatureHeaderStyle;
  retentionPeriod: number;
  retentionSuccessDelay: number;
  retentionFailedDelay: number;
  /** --retention-dead-letter-delay: dead letters untouched this long are purged (0 keeps them). */
  retentionDeadLetterDelay: number;
  // Broker.
  broker: "nats" | "kafka";
  brokerTopics: string[];
  /** Bounded redelivery of messages whose deliveries could not start, and when a consumer counts as stuck. */
  redelivery: Redelivery;
  /** Folder where dead letters the store refused are parked until it accepts them (workers/dead-letter-spool.ts). */
  deadLetterSpool: string;
  natsUrl: string;
  /** NATS credentials from flags (the URL's own are used when these are absent). */
  natsAuth: NatsAuth;
  natsStream: string;
  /** Limits of the stream --nats-stream (age in ms, bytes, messages; 0: none). */
  natsStreamLimits: StreamLimits;
  natsConsumer: string;
  /**
   * --nats-partitions: the event stream split by (tenant, ordering key) among the consuming
   * processes, each partition consumed by one of them at a time (core/broker/nats-partitions.ts);
   * 1, the default, is one durable consumer shared by all.
   */
  natsPartitions: number;
  kafkaBrokers: string[];
  kafkaConsumerGroup: string;
  // Temporal.
  temporal: TemporalOptions;
  taskQueue: string;
  /** Which of the three task queues this process polls. */
  taskQueues: ("workflows" | "sends" | "maintenance")[];
  /**
   * --worker-deployment-name and --worker-build-id: the Worker Deployment Version this
   * process's workers poll as (workers/worker-versioning.ts); unversioned when absent. The
   * build id is the hash of the compiled code unless given.
   */
  workerDeployment?: { name: string; buildId?: string | undefined };
  /** Whether this process consumes broker events. */
  consume: boolean;
  maxConcurrentSends: number;
  maxConcurrentWorkflowTasks: number;
  /**
   * Deliveries started here with a send in flight, at most (workers/deliveries-in-flight.ts):
   * further starts wait for one to finish. Applies where starts are eager.
   */
  maxDeliveriesInFlight: number;
  /**
   * Where new deliveries send: `queue`, as activities on `<task-queue>-sends` (scaled
   * apart), `local`, as local activities of the workflow worker (fewer Temporal round
   * trips per delivery, no separate send capacity), or `local-first` (the default): the
   * first send local within localSendBudget, then the queue (activities/local-first.ts).
   */
  sendMode: SendMode;
  /** --local-send-budget: how long a local first send may wait for its answer before it hands over. */
  localSendBudget: number;
  /**
   * Whether deliveries this process starts ask for eager workflow start when it also
   * runs the delivery workflow worker (their first workflow task then runs here
   * without a trip through the task queue).
   */
  eagerStart: boolean;
  /** --temporal-sdk-metrics: the SDK's own metrics on /metrics beside the product's (workers/sdk-runtime.ts). */
  temporalSdkMetrics: boolean;
  /** --task-queue-stats-interval: how often one worker process reads the task queues' backlog, ms (0: never). */
  taskQueueStatsInterval: number;
  /** --delivery-latency-tenants: tenants with a label of their own on the delivery latency histogram. */
  deliveryLatencyTenants: number;
  /** Workflows the worker keeps cached between tasks; the SDK's default (from the heap size) when absent. */
  maxCachedWorkflows?: number;
  /** gRPC address of the rate limit service asked before each send; off when absent. */
  ratelimitAddr?: string;
  ratelimitDomain: string;
  /** Where sends may go (core/egress-policy.ts). */
  egress: EgressOptions;
  /** How long a stopping worker lets in-flight sends finish, ms. */
  shutdownGrace: number;
  /**
   * --enforce-event-schemas: an event whose payload fails its type's schema in the event
   * catalog is refused (POST /events 400, dead letter from the broker) instead of counted.
   */
  enforceEventSchemas: boolean;
  // API only.
  auditTopic: string;
  auth?: AuthOptions;
  portal: PortalOptions;
  quotas: QuotaOptions;
}
