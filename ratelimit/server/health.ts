// Health of the service: the cache connection (checked only with
// KVSTORE_HEALTH_CHECK_ACTIVE_CONNECTION), the configuration (only with
// HEALTHY_WITH_AT_LEAST_ONE_CONFIG_LOADED) and termination (SIGTERM). Healthy only
// when every enabled component is. Listeners hear every change of the overall state.

export interface HealthOptions {
  checkCacheConnection: boolean;
  requireConfig: boolean;
  cacheConnected: () => boolean;
}

export class Health {
  private configLoaded = false;
  private terminating = false;
  private last: boolean | undefined;
  private readonly listeners: ((healthy: boolean) => void)[] = [];

  constructor(private readonly opts: HealthOptions) {}

  setConfigLoaded(domains: number): void {
    this.configLoaded = domains > 0;
    this.notify();
  }

  setTerminating(): void {
    this.terminating = true;
    this.notify();
  }

  isTerminating(): boolean {
    return this.terminating;
  }

  /** Names of the unhealthy components; empty when healthy. */
  problems(): string[] {
    const out: string[] = [];
    if (this.opts.checkCacheConnection && !this.opts.cacheConnected())
      out.push("cache: no active connection");
    if (this.opts.requireConfig && !this.configLoaded) out.push("config: no rate limit domain loaded");
    if (this.terminating) out.push("sigterm: shutting down");
    return out;
  }

  healthy(): boolean {
    return this.problems().length === 0;
  }

  onChange(listener: (healthy: boolean) => void): void {
    this.listeners.push(listener);
    listener(this.healthy());
  }

  /** Re-evaluates (the cache connection can change at any time) and tells listeners about a change. */
  notify(): void {
    const now = this.healthy();
    if (now === this.last) return;
    this.last = now;
    for (const l of this.listeners) l(now);
  }
}
