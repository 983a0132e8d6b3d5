import type pg from "pg";
import type { QuotaOptions } from "../core/options.js";
import { DEFAULT_TENANT_ID } from "../core/tenant-rows.js";
import { ApiError } from "./errors.js";

// Per-tenant quotas on what one tenant's callers can pile up through the API: configs, live
// portal sessions, running recoveries, test sends (per tenant and per config, a minute
// each). They are counted in PostgreSQL, so every API process sees the same numbers; a
// count and the write after it are not one transaction, so callers racing at the limit
// may pass it by a few. The default tenant (the operator's own) has none.

/** 429 with Retry-After: the quota's name, its flag, and when to try again. */
const quotaExceeded = (message: string, retryAfterSeconds: number) =>
  new ApiError(429, "RATE_LIMITED", message, retryAfterSeconds);

/** Count quotas free up only when something is removed: a minute is the hint. */
const COUNT_RETRY_AFTER_S = 60;

export class TenantQuotas {
  constructor(
    private readonly pool: pg.Pool,
    private readonly limits: QuotaOptions,
  ) {}

  private async count(sql: string, values: unknown[]): Promise<number> {
    const { rows } = await this.pool.query<{ n: number }>(sql, values);
    return rows[0]?.n ?? 0;
  }

  private refuse(tenantId: string, have: number, limit: number, what: string, flag: string): never {
    throw quotaExceeded(
      `tenant ${tenantId} has ${have} ${what}, its quota (${flag} ${limit}); remove some or ask the operator to raise it`,
      COUNT_RETRY_AFTER_S,
    );
  }

  /** Before a config is created in `tenantId`. */
  async config(tenantId: string): Promise<void> {
    const limit = this.limits.configs;
    if (!limit || tenantId === DEFAULT_TENANT_ID) return;
    const have = await this.count("SELECT count(*)::int AS n FROM configs WHERE tenant_id = $1::uuid", [
      tenantId,
    ]);
    if (have >= limit) this.refuse(tenantId, have, limit, "configs", "--tenant-max-configs");
  }

  /** Before a portal session of `tenantId` is created. */
  async portalSession(tenantId: string): Promise<void> {
    const limit = this.limits.portalSessions;
    if (!limit || tenantId === DEFAULT_TENANT_ID) return;
    const have = await this.count(
      `SELECT count(*)::int AS n FROM portal_sessions
        WHERE tenant_id = $1::uuid AND revoked_at IS NULL AND expires_at > now()`,
      [tenantId],
    );
    if (have >= limit)
      this.refuse(tenantId, have, limit, "live portal sessions", "--tenant-max-portal-sessions");
  }

  /** Before a new recovery of one of `tenantId`'s configs starts. */
  async recovery(tenantId: string): Promise<void> {
    const limit = this.limits.recoveries;
    if (!limit || tenantId === DEFAULT_TENANT_ID) return;
    const have = await this.count(
      `SELECT count(*)::int AS n FROM recoveries r JOIN configs c ON c.id = r.config_id
        WHERE c.tenant_id = $1::uuid AND r.state = 'running'`,
      [tenantId],
    );
    if (have >= limit) this.refuse(tenantId, have, limit, "running recoveries", "--tenant-max-recoveries");
  }

  /**
   * Before a test send to `configId` of `tenantId`: at most `testSendsPerConfig` a minute
   * per config (every tenant, the default one too: a test send POSTs to a receiver at the
   * caller's word) and `testSends` a minute per tenant (not the default tenant).
   */
  async testSend(tenantId: string, configId: string): Promise<void> {
    const { testSends, testSendsPerConfig } = this.limits;
    if (!testSends && !testSendsPerConfig) return;
    // Test sends are the attempts without a workflow whose event is a test event.
    const { rows } = await this.pool.query<{
      config: number;
      tenant: number;
      oldest: Date | null;
      oldestOfConfig: Date | null;
    }>(
      `SELECT count(*) FILTER (WHERE a.config_id = $2::uuid)::int AS config, count(*)::int AS tenant,
              min(a.created_at) AS oldest, min(a.created_at) FILTER (WHERE a.config_id = $2::uuid) AS "oldestOfConfig"
         FROM attempts a JOIN configs c ON c.id = a.config_id JOIN events e ON e.id = a.event_id
        WHERE c.tenant_id = $1::uuid AND a.created_at > now() - interval '1 minute'
          AND a.workflow_id IS NULL AND e.idempotency_key LIKE 'test-%'`,
      [tenantId, configId],
    );
    const seen = rows[0]!;
    const retryAfter = (oldest: Date | null) =>
      Math.max(1, Math.ceil(((oldest?.getTime() ?? Date.now()) + 60_000 - Date.now()) / 1000));
    if (testSendsPerConfig && seen.config >= testSendsPerConfig)
      throw quotaExceeded(
        `config ${configId} had ${seen.config} test sends in the last minute, its quota (--config-max-test-sends ${testSendsPerConfig})`,
        retryAfter(seen.oldestOfConfig),
      );
    if (testSends && tenantId !== DEFAULT_TENANT_ID && seen.tenant >= testSends)
      throw quotaExceeded(
        `tenant ${tenantId} had ${seen.tenant} test sends in the last minute, its quota (--tenant-max-test-sends ${testSends})`,
        retryAfter(seen.oldest),
      );
  }
}
