import type { RequestHandler, Response, Router } from "express";
import type pg from "pg";
import type { BrokerConnections } from "../activities/destinations/connections.js";
import type { OAuthTokens } from "../activities/oauth-tokens.js";
import { generateSecret } from "../activities/secrets.js";
import { signatureHeadersOf } from "../activities/signature-headers.js";
import type { PrismaClient } from "../common/db/database.js";
import { parseDuration } from "../common/duration.js";
import type { Batch } from "../core/batching.js";
import type { ConfigSecrets } from "../core/config-secrets.js";
import { destinationOf, openDestinationSecret } from "../core/destinations.js";
import type { EgressPolicy } from "../core/egress-policy.js";
import { openStoredAuth, readStoredAuth, type StoredAuth } from "../core/endpoint-auth-rows.js";
import { normalizeSubscription } from "../core/event-types.js";
import { compileFilter } from "../core/filter-compile.js";
import { FilterSyntaxError } from "../core/filter-syntax.js";
import type { SignatureHeaderStyle } from "../core/options.js";
import { type OrderingFailure, storedOrdering } from "../core/ordering.js";
import { DEFAULT_TENANT_ID, findTenant, type TenantRow } from "../core/tenant-rows.js";
import type { Config } from "../generated/prisma/client.js";
import type { ConfigListCache } from "./config-list-cache.js";
import { newPlacement, replacedPlacement } from "./config-placement.js";
import type { ConfigStore } from "./config-store.js";
import type { DeliveryControl } from "./delivery-control.js";
import { type DestinationInput, readDestination } from "./destination-input.js";
import { type EndpointAuthChange, withAuth } from "./endpoint-auth-input.js";
import { checkEndpoint } from "./endpoint-url.js";
import { ApiError, notFound, validation } from "./errors.js";
import { afterCursor, pageOf, readPage } from "./paging.js";
import { portalSessionOf } from "./portal-auth.js";
import type { RouteAccess } from "./route-access.js";
import { attemptJson, configJson, cursorJson } from "./serialize.js";
import { subscriptionWarnings } from "./subscription-warnings.js";
import type { TenantQuotas } from "./tenant-quotas.js";
import { tenantScopeOf } from "./tenant-scope.js";
import { sendTestDelivery } from "./test-delivery.js";
import { testEventOf } from "./test-event.js";
import { allowQuery, check, jsonBody, UUID_RE } from "./validation.js";

interface ConfigUser {
  endpoint?: string;
  destination?: DestinationInput;
  eventTypes: string[];
  secret?: string;
  name?: string;
  filter?: Record<string, unknown> | null;
  ordering?: { enabled: boolean; onFailure?: OrderingFailure } | null;
  batch?: Batch | null;
  signatureHeaders?: SignatureHeaderStyle | null;
  maxConcurrency?: number | null;
  tenantId?: string;
  /** Endpoint auth and headers, applied as PATCH /configs/{id}/auth applies them. */
  auth?: EndpointAuthChange;
}

interface SecretChange {
  secret?: string;
  overlap?: string;
}

/** Longest overlap a rotated secret may keep signing. */
const MAX_OVERLAP_MS = 720 * 3_600_000;

export { checkEndpoint };

const BROKER_ENDPOINT = /^(kafka|nats|amqps?):\/\//;

/**
 * The filter as stored, or a VALIDATION error naming the path of what is wrong.
 * It is compiled as matching will compile it, so what is stored always runs.
 */
function checkedFilter(filter: Record<string, unknown> | null): Record<string, unknown> | null {
  if (filter === null) return null;
  try {
    compileFilter(filter);
  } catch (err) {
    if (err instanceof FilterSyntaxError) throw validation(err.message);
    throw validation(`filter cannot be compiled: ${(err as Error).message}`);
  }
  return filter;
}

function readConfigUser(body: unknown, egress: EgressPolicy) {
  const c = check<ConfigUser>("ConfigUser", body);
  if (c.tenantId !== undefined && !UUID_RE.test(c.tenantId))
    throw validation(
      `tenantId must be a tenant id (a UUID), got ${JSON.stringify(c.tenantId.slice(0, 100))}`,
    );
  const ordering = c.ordering !== undefined ? storedOrdering(c.ordering) : undefined;
  return {
    /** Checked with the destination it goes with (api/config-placement.ts). */
    endpoint: c.endpoint,
    destination: c.destination === undefined ? undefined : readDestination(c.destination, egress),
    eventTypes: [...new Set(c.eventTypes.map(normalizeSubscription))],
    /** As given: a create generates one when absent, a replace decides (replacedSecret). */
    secret: c.secret,
    ...(c.name !== undefined ? { name: c.name } : {}),
    ...(c.filter !== undefined ? { filter: checkedFilter(c.filter) } : {}),
    ...(ordering !== undefined ? { ordering } : {}),
    ...(c.batch !== undefined ? { batch: c.batch } : {}),
    ...(c.signatureHeaders !== undefined ? { signatureHeaders: c.signatureHeaders } : {}),
    ...(c.maxConcurrency !== undefined ? { maxConcurrency: c.maxConcurrency } : {}),
    ...(c.tenantId !== undefined ? { tenantId: c.tenantId.toLowerCase() } : {}),
    auth: c.auth,
  };
}

const noSuchTenant = (id: string) => validation(`tenantId ${id} does not name a tenant`);

/**
 * The tenant a new config goes to: the one named (which must exist, and be the token's
 * own for a tenant-scoped token, which gets the same answer for another tenant's id as for
 * an unknown one), else the token's tenant, else the default tenant.
 */
async function tenantOfNewConfig(pool: pg.Pool, named: string | undefined, scope: TenantRow | undefined) {
  if (named === undefined) return scope?.id ?? DEFAULT_TENANT_ID;
  if (scope ? scope.id !== named : !(await findTenant(pool, named))) throw noSuchTenant(named);
  return named;
}

export interface ConfigRoutesDeps {
  prisma: PrismaClient;
  /** Prisma's pool: the test delivery's attempt row goes in in plain SQL, as a delivery's does. */
  pool: pg.Pool;
  /** Hot paths in plain SQL (get, create, replace, filtered list). */
  store: ConfigStore;
  /** The unfiltered, unpaged list. */
  listCache: ConfigListCache;
  sendTimeoutMs: number;
  /** The deployment's names of the signing headers, for configs that set none. */
  signatureHeaders: SignatureHeaderStyle;
  /** Pending deliveries of a config that goes away are told to end, without another send. */
  deliveries: DeliveryControl;
  /** Where sends may go: endpoints that are denied address literals are refused. */
  egress: EgressPolicy;
  /** Seals a config's secrets on write; opens them for the test delivery and the secret route. */
  secrets: ConfigSecrets;
  /** OAuth tokens for test deliveries to endpoints that want one. */
  oauthTokens: OAuthTokens;
  /** Broker connections for test deliveries to Kafka, NATS, AMQP and SQS destinations. */
  brokers: BrokerConnections;
  /** Per-tenant quotas: configs, test sends. */
  quotas: TenantQuotas;
}

/**
 * The event catalog's warnings about the subscriptions, read before the write: a read
 * failing after it would answer an error for a config that was stored (and a retry would
 * store it twice).
 */
const withWarnings = (
  warnings: string[],
  config: Config,
  clearSecret?: string,
  auth?: StoredAuth | null,
) => ({
  data: withAuth(configJson(config, clearSecret), auth),
  ...(warnings.length > 0 ? { warnings } : {}),
});

/**
 * The secret a PUT writes: the one given, or a new one (the Formance contract). A portal
 * session without the "secrets" feature may not change it: absent keeps the stored one
 * (undefined), given is 403, as the page's secret routes are.
 */
function replacedSecret(res: Response, given: string | undefined): string | undefined {
  const session = portalSessionOf(res);
  if (!session || session.features.includes("secrets")) return given ?? generateSecret();
  if (given !== undefined)
    throw new ApiError(
      403,
      "FORBIDDEN",
      'this portal session lacks the feature "secrets", which setting the signing secret needs (leave "secret" out to keep the stored one)',
    );
  return undefined;
}

const missing = (id: string) => notFound(`config ${id} not found`);

/** The config of a route's `:id`, or NOT_FOUND (also for an id that is no UUID). */
type LoadConfig = (id: string) => Promise<Config>;

export function configRoutes(access: RouteAccess, deps: ConfigRoutesDeps): Router {
  const r = access.router();
  const load: LoadConfig = async (id) => {
    const config = UUID_RE.test(id) ? await deps.store.find(id) : null;
    if (!config) throw missing(id);
    return config;
  };
  listRoute(r, deps);
  createRoute(r, deps);
  readRoutes(r, deps, load);
  replaceRoute(r, deps, load);
  lifecycleRoutes(r, deps, load);
  secretChangeRoute(r, deps, load);
  testDeliveryRoute(r, deps, load);
  return r;
}

/** GET /configs: the cached full list, a filtered list, or a page. */
function listRoute(r: Router, { prisma, store, listCache }: ConfigRoutesDeps): void {
  r.get("/configs", allowQuery("id", "endpoint", "pageSize", "cursor"), async (req, res) => {
    const { id, endpoint } = req.query as Record<string, string | undefined>;
    if (id !== undefined && !UUID_RE.test(id))
      throw validation(`id must be a UUID, got ${JSON.stringify(id)}`);
    // A broker destination's endpoint is derived (core/destinations.ts): matched as it is.
    const normalized =
      endpoint === undefined || BROKER_ENDPOINT.test(endpoint) ? endpoint : checkEndpoint(endpoint);
    const page = readPage(req.query, undefined);
    // A tenant-scoped token lists its tenant's configs only (never the shared cached list).
    const tenantId = tenantScopeOf(res)?.id;
    if (!page && id === undefined && normalized === undefined && tenantId === undefined) {
      const list = await listCache.get();
      // The ETag express would compute, computed once per rendering instead of per 3 MB answer.
      res.set("content-type", "application/json; charset=utf-8");
      if (list.etag) res.set("etag", list.etag);
      res.send(list.body);
      return;
    }
    if (!page) {
      res.json(
        cursorJson((await store.list({ id, endpoint: normalized, tenantId })).map((c) => configJson(c))),
      );
      return;
    }
    const rows = await prisma.config.findMany({
      where: {
        ...(id ? { id } : {}),
        ...(normalized ? { endpoint: normalized } : {}),
        ...(tenantId ? { tenantId } : {}),
        ...afterCursor("updatedAt", page),
      },
      orderBy: [{ updatedAt: "desc" }, { id: "desc" }],
      take: page.pageSize + 1,
    });
    const { items, next } = pageOf(rows, page, (c) => c.updatedAt);
    res.json(
      cursorJson(
        items.map((c) => configJson(c)),
        { pageSize: page.pageSize, next },
      ),
    );
  });
}

/** POST /configs: a new config, its auth sealed in the same transaction. */
function createRoute(r: Router, deps: ConfigRoutesDeps): void {
  const { pool, store, egress } = deps;
  r.post("/configs", allowQuery(), jsonBody({ required: true }), async (req, res) => {
    // The one answer besides a rotation and GET /configs/{id}/secret that shows the secret.
    const { auth, secret, endpoint: given, destination: read, ...rest } = readConfigUser(req.body, egress);
    const placed = newPlacement(deps, { endpoint: given, destination: read, auth });
    const data = {
      ...rest,
      endpoint: placed.endpoint,
      destination: placed.destination,
      secret: secret ?? generateSecret(),
    };
    const tenantId = await tenantOfNewConfig(pool, data.tenantId, tenantScopeOf(res));
    await deps.quotas.config(tenantId);
    const warnings = await subscriptionWarnings(pool, data.eventTypes);
    // Sealed for the new config's id, written in the same transaction as the config.
    const sealed: { auth: StoredAuth | null } = { auth: null };
    const authFor = placed.authFor
      ? (configId: string) => {
          sealed.auth = placed.authFor!(configId);
          return sealed.auth;
        }
      : undefined;
    let config: Config;
    try {
      config = await store.insert({ ...data, tenantId }, authFor);
    } catch (err) {
      // The tenant was deleted between the check and the insert.
      if ((err as { code?: string }).code === "23503") throw noSuchTenant(tenantId);
      throw err;
    }
    res.json(withWarnings(warnings, config, data.secret, sealed.auth));
  });
}

/** GET /configs/{id} and its secret. */
function readRoutes(r: Router, deps: ConfigRoutesDeps, load: LoadConfig): void {
  const { pool, secrets } = deps;
  r.get("/configs/:id", allowQuery(), async (req, res) => {
    const config = await load(String(req.params.id));
    res.json({ data: withAuth(configJson(config), await readStoredAuth(pool, config.id)) });
  });

  // Reading a secret is as strong as changing it (whoever holds it can sign deliveries), so
  // api/auth.ts asks the write scope for this GET.
  r.get("/configs/:id/secret", allowQuery(), async (req, res) => {
    const config = await load(String(req.params.id));
    res.json({
      data: {
        secret: secrets.open(config.id, "secret", config.secret),
        ...(config.previousSecretExpiresAt && config.previousSecretExpiresAt > new Date()
          ? { previousSecretExpiresAt: config.previousSecretExpiresAt.toISOString() }
          : {}),
      },
    });
  });
}

/** PUT /configs/{id}: the config replaced, its auth changed when the body has one. */
function replaceRoute(r: Router, deps: ConfigRoutesDeps, load: LoadConfig): void {
  const { pool, store, egress, secrets, deliveries } = deps;
  r.put("/configs/:id", allowQuery(), jsonBody({ required: true }), async (req, res) => {
    const { auth, secret, endpoint: given, destination: read, ...rest } = readConfigUser(req.body, egress);
    const data = { ...rest, secret: replacedSecret(res, secret) };
    const id = String(req.params.id);
    if (!UUID_RE.test(id)) throw missing(id);
    if (data.tenantId !== undefined && data.tenantId !== (await load(id)).tenantId) {
      throw validation(
        `tenantId cannot change: config ${id} stays in its tenant (create a config in the other one)`,
      );
    }
    const warnings = await subscriptionWarnings(pool, data.eventTypes);
    // Under the config's row lock: the endpoint, destination and auth decided from the stored
    // ones (absent keeps them), and a kept credential must stay where it was set for
    // (api/credential-binding.ts, api/destination-input.ts).
    const replaced = await store.replace(id, data, (stored) =>
      replacedPlacement(
        { secrets, egress, configId: id },
        { endpoint: given, destination: read, auth },
        stored,
      ),
    );
    if (!replaced) throw missing(id);
    // Its keys' backlogs still drain in order; a blocked one would otherwise hold them for good.
    if (data.ordering === null) await deliveries.releaseOrderedKeys(id, "ordering turned off");
    res.json(withWarnings(warnings, replaced.config, undefined, replaced.auth));
  });
}

/** DELETE /configs/{id}, and PUT /configs/{id}/activate and /deactivate. */
function lifecycleRoutes(r: Router, deps: ConfigRoutesDeps, load: LoadConfig): void {
  const { prisma, deliveries } = deps;
  r.delete("/configs/:id", allowQuery(), async (req, res) => {
    const config = await load(String(req.params.id));
    await prisma.config.delete({ where: { id: config.id } });
    await deliveries.closeConfigDeliveries(config.id, "config deleted");
    res.status(200).json({ data: { id: config.id, deleted: true } });
  });

  for (const [action, active] of [
    ["activate", true],
    ["deactivate", false],
  ] as const) {
    r.put(`/configs/:id/${action}`, allowQuery(), async (req, res) => {
      const current = await load(String(req.params.id));
      const now = new Date();
      // Activation clears an automatic deactivation and restarts the failing clock.
      const config = await prisma.config.update({
        where: { id: current.id },
        data: active
          ? { active, updatedAt: now, activatedAt: now, deactivatedReason: null, deactivatedAt: null }
          : { active, updatedAt: now },
      });
      if (!active) await deliveries.closeConfigDeliveries(config.id, "config deactivated");
      res.json({ data: configJson(config) });
    });
  }
}

/** PUT /configs/{id}/secret/change: a new secret, the previous one kept for the overlap. */
function secretChangeRoute(r: Router, deps: ConfigRoutesDeps, load: LoadConfig): void {
  const { prisma, secrets } = deps;
  r.put("/configs/:id/secret/change", allowQuery(), jsonBody({ required: false }), async (req, res) => {
    const change = req.body === undefined ? {} : check<SecretChange>("SecretChange", req.body);
    const overlapMs = change.overlap === undefined ? 0 : parseDuration(change.overlap);
    if (overlapMs > MAX_OVERLAP_MS) throw validation(`overlap must be at most 720h, got ${change.overlap}`);
    const current = await load(String(req.params.id));
    const secret = change.secret ?? generateSecret();
    // Sealed again for its new column: a sealed value is bound to its row and column.
    const previous = overlapMs > 0 ? secrets.open(current.id, "secret", current.secret) : null;
    const config = await prisma.config.update({
      where: { id: current.id },
      data: {
        secret: secrets.seal(current.id, "secret", secret),
        previousSecret: previous === null ? null : secrets.seal(current.id, "previous_secret", previous),
        previousSecretExpiresAt: overlapMs > 0 ? new Date(Date.now() + overlapMs) : null,
        updatedAt: new Date(),
      },
    });
    res.json({ data: configJson(config, secret) });
  });
}

/** POST /configs/{id}/test (and its deprecated GET alias): one test delivery to the endpoint. */
function testDeliveryRoute(r: Router, deps: ConfigRoutesDeps, load: LoadConfig): void {
  const { prisma, pool, sendTimeoutMs, egress, secrets, oauthTokens, brokers } = deps;
  const send: RequestHandler = async (req, res) => {
    const config = await load(String(req.params.id));
    // Checked before the quota counts the send: a refused body sends nothing.
    const event = await testEventOf(pool, req.body);
    await deps.quotas.testSend(config.tenantId, config.id);
    const stored = await readStoredAuth(pool, config.id);
    const http = destinationOf(config).type === "http";
    const attempt = await sendTestDelivery(
      { prisma, pool },
      secrets.openConfig(config),
      sendTimeoutMs,
      { egress, oauthTokens, brokers },
      {
        auth: stored && http ? openStoredAuth(secrets, config.id, stored) : null,
        secret: http ? {} : openDestinationSecret(secrets, config.id, stored?.destination_secret),
      },
      signatureHeadersOf(config.signatureHeaders, deps.signatureHeaders),
      event,
    );
    res.json({ data: attemptJson(attempt) });
  };
  r.post("/configs/:id/test", allowQuery(), jsonBody({ required: false }), send);
  // Deprecated: a GET with a side effect (kept for existing callers; it needs the write scope too).
  r.get("/configs/:id/test", allowQuery(), (req, res, next) => {
    res.setHeader("Deprecation", "true");
    res.setHeader(
      "Link",
      `</configs/${encodeURIComponent(String(req.params.id))}/test>; rel="successor-version"`,
    );
    return send(req, res, next);
  });
}
