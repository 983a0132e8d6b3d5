import express, { type Express, type RequestHandler } from "express";
import type pg from "pg";
import type { BrokerConnections } from "../activities/destinations/connections.js";
import type { OAuthTokens } from "../activities/oauth-tokens.js";
import type { PrismaClient } from "../common/db/database.js";
import type { DatabaseTimeouts } from "../common/db/timeouts.js";
import { type HealthCheck, healthHandler } from "../common/health.js";
import { isLoopback } from "../common/http-server.js";
import type { Logger } from "../common/logger.js";
import { VERSION } from "../common/version.js";
import type { BrokerPublisher } from "../core/broker/types.js";
import type { ConfigSecrets } from "../core/config-secrets.js";
import type { EgressPolicy } from "../core/egress-policy.js";
import type { EventCatalog } from "../core/event-catalog.js";
import { metricsHandler, metricsHandlerFrom } from "../core/metrics.js";
import type { AuthOptions, PortalOptions, QuotaOptions, SignatureHeaderStyle } from "../core/options.js";
import { auditTrail } from "./audit.js";
import { requireToken } from "./auth.js";
import { checkParsedBody, verifyUtf8 } from "./body-checks.js";
import { ConfigListCache } from "./config-list-cache.js";
import { configRoutes } from "./config-routes.js";
import { configStore } from "./config-store.js";
import type { DeadLetterReplayer } from "./dead-letter-replay.js";
import { deadLetterRoutes } from "./dead-letter-routes.js";
import type { DeliveryControl } from "./delivery-control.js";
import { deliveryRoutes } from "./delivery-routes.js";
import { endpointAuthRoutes } from "./endpoint-auth-routes.js";
import { endpointStatsRoutes } from "./endpoint-stats-routes.js";
import { errorHandler, unknownRoute } from "./errors.js";
import { eventTypeRoutes } from "./event-type-routes.js";
import { hostCheck } from "./host-check.js";
import { openapi } from "./openapi.js";
import { orderingKeyRoutes } from "./ordering-key-routes.js";
import { portalAuth } from "./portal-auth.js";
import { portalPage } from "./portal-page.js";
import { portalSessionRoutes } from "./portal-session-routes.js";
import { PortalTokens } from "./portal-token.js";
import type { Recoveries } from "./recovery.js";
import { recoveryRoutes } from "./recovery-routes.js";
import type { Replayer } from "./replay.js";
import { RouteAccess } from "./route-access.js";
import { TenantQuotas } from "./tenant-quotas.js";
import { tenantRedaction } from "./tenant-redaction.js";
import { tenantRoutes } from "./tenant-routes.js";
import { resolveTokenTenant } from "./tenant-scope.js";
import { allowQuery } from "./validation.js";

/** Largest request body accepted (a config is a few hundred bytes). */
export const MAX_BODY_BYTES = 64 * 1024;

export interface AppDeps {
  prisma: PrismaClient;
  /** Prisma's pool, for the hot paths in plain SQL. */
  pool: pg.Pool;
  /** The pool's bounds, named in the 503 of a query that ran into one. */
  dbTimeouts?: DatabaseTimeouts | undefined;
  logger: Logger;
  checks: Record<string, HealthCheck>;
  /** The listen host: with authentication off, one of the Host names answered (api/host-check.ts). */
  listenHost: string;
  /** Bearer-token authentication of every API route (health, info and the document stay open). */
  auth?: AuthOptions | undefined;
  audit?: { publisher: BrokerPublisher; topic: string } | undefined;
  replay: Replayer;
  /** Reaches running deliveries (close on deactivate/delete, cancel). */
  deliveries: DeliveryControl;
  /** Where test deliveries may go; endpoints that are denied address literals are refused. */
  egress: EgressPolicy;
  /** Seals config secrets on write, opens them for test deliveries and GET /configs/{id}/secret. */
  secrets: ConfigSecrets;
  /** OAuth tokens for test deliveries (the process's cache). */
  oauthTokens: OAuthTokens;
  /** Broker connections for test deliveries to Kafka, NATS, AMQP and SQS destinations (the process's). */
  brokers: BrokerConnections;
  /** POST /events: the consumer's start path over HTTP (api/event-ingest.ts). */
  ingest: RequestHandler[];
  /** Bulk recovery of a config's failed deliveries (POST /configs/{id}/recover). */
  recoveries: Recoveries;
  /** Replays a dead letter through the consumer's start path. */
  replayDeadLetter: DeadLetterReplayer;
  /** This process's copy of the event catalog, refreshed at once by the catalog's routes. */
  catalog: EventCatalog;
  /** Timeout of test deliveries (--send-timeout). */
  sendTimeoutMs: number;
  /** The deployment's names of the signing headers (--signature-headers): test deliveries use them too. */
  signatureHeaders: SignatureHeaderStyle;
  /** The consumer portal's page and sessions. */
  portal: PortalOptions;
  /** Per-tenant quotas (api/tenant-quotas.ts). */
  quotas: QuotaOptions;
  /** What /metrics serves, when not this process's own registry (the sum over a cluster). */
  metrics?: (() => Promise<string>) | undefined;
}

/** The HTTP application of `serve`: the configs API plus health, info and the OpenAPI document. */
export function createApp(deps: AppDeps): Express {
  const app = express();
  app.disable("x-powered-by");
  // `/Configs/x/secret` or `/configs/x/secret/` name no route: one spelling per route.
  app.set("case sensitive routing", true);
  app.set("strict routing", true);
  if (!deps.auth) app.use(hostCheck(deps.listenHost, deps.portal.baseUrl));
  app.set("query parser", "simple");
  app.get("/_healthcheck", healthHandler(deps.checks));
  app.get("/_info", (_req, res) => {
    res.json({ version: VERSION });
  });
  app.get("/openapi.json", (_req, res) => {
    res.json(openapi);
  });
  app.get("/metrics", deps.metrics ? metricsHandlerFrom(deps.metrics) : metricsHandler);
  // The page's files are public (its token travels in the URL fragment, read by the page).
  app.use(portalPage(deps.portal));
  if (deps.audit) app.use(auditTrail(deps.audit.publisher, deps.audit.topic, deps.logger));
  const portalTokens = new PortalTokens(deps.secrets.ring);
  const quotas = new TenantQuotas(deps.pool, deps.quotas);
  // Portal tokens first: with JWT auth on, requireToken lets the requests they verified pass.
  app.use(portalAuth(deps.pool, portalTokens));
  // Authentication only: each route's rule decides what the caller may do (api/route-access.ts).
  if (deps.auth) app.use(requireToken(deps.auth), resolveTokenTenant(deps.pool));
  const access = new RouteAccess(deps.pool, deps.auth);
  app.use(tenantRedaction);
  // Before the configs' body parser: events have their own, larger bound.
  app.use(access.router().post("/events", allowQuery(), ...deps.ingest));
  // Also before it: a type's schema may be larger than a config.
  app.use(eventTypeRoutes(access, deps.pool, deps.catalog));
  app.use(
    express.json({ limit: MAX_BODY_BYTES, strict: false, type: "application/json", verify: verifyUtf8 }),
  );
  app.use(checkParsedBody);
  const etagOf = app.get("etag fn") as ((body: Buffer) => string | undefined) | undefined;
  app.use(
    configRoutes(access, {
      prisma: deps.prisma,
      pool: deps.pool,
      store: configStore(deps.pool, deps.secrets),
      listCache: new ConfigListCache(deps.pool, etagOf, deps.logger),
      sendTimeoutMs: deps.sendTimeoutMs,
      signatureHeaders: deps.signatureHeaders,
      deliveries: deps.deliveries,
      egress: deps.egress,
      secrets: deps.secrets,
      oauthTokens: deps.oauthTokens,
      brokers: deps.brokers,
      quotas,
    }),
  );
  app.use(tenantRoutes(access, deps.pool, deps.deliveries));
  const mintable = Boolean(deps.auth) || isLoopback(deps.listenHost);
  app.use(portalSessionRoutes(access, deps.pool, portalTokens, { ...deps.portal, mintable, quotas }));
  app.use(endpointAuthRoutes(access, { pool: deps.pool, secrets: deps.secrets, egress: deps.egress }));
  app.use(deliveryRoutes(access, deps.prisma, deps.replay, deps.deliveries));
  app.use(deadLetterRoutes(access, deps.prisma, deps.replayDeadLetter));
  app.use(recoveryRoutes(access, deps.recoveries));
  app.use(endpointStatsRoutes(access, deps.prisma));
  app.use(orderingKeyRoutes(access, deps.pool, deps.deliveries));
  app.use(unknownRoute);
  app.use(errorHandler(deps.logger, deps.dbTimeouts));
  return app;
}
