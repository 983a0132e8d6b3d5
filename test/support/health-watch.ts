export interface HealthSample {
  /** When the probe was sent (ms since the epoch). */
  sent: number;
  /** When the answer came. */
  at: number;
  /** HTTP status, 0 when no answer came. */
  status: number;
  checks: Record<string, string>;
}

/**
 * Polls a `/_healthcheck` one request after another (a probe may take up to the
 * checks' timeout) and keeps every answer, so that a test can tell when an outage
 * was reported and when health came back.
 */
export class HealthWatch {
  readonly samples: HealthSample[] = [];
  private running = false;
  private loop?: Promise<void>;

  constructor(
    private readonly url: string,
    private readonly everyMs = 100,
  ) {}

  start(): this {
    this.running = true;
    this.loop = (async () => {
      while (this.running) {
        this.samples.push(await this.probe());
        await new Promise((r) => setTimeout(r, this.everyMs));
      }
    })();
    return this;
  }

  async stop(): Promise<void> {
    this.running = false;
    await this.loop;
  }

  /** Stops polling once health answered 200 after `since`, or after `timeoutMs` at most. */
  async stopOnceHealthy(since: number, timeoutMs: number): Promise<void> {
    for (const deadline = Date.now() + timeoutMs; !this.firstHealthy(since) && Date.now() < deadline; )
      await new Promise((r) => setTimeout(r, 200));
    await this.stop();
  }

  /** The first answer from `since` on that is a 503 whose `check` failed. */
  firstFailure(check: string, since: number): HealthSample | undefined {
    return this.samples.find(
      (s) => s.at >= since && s.status === 503 && s.checks[check]?.startsWith("error") === true,
    );
  }

  /** The first 200 from `since` on. */
  firstHealthy(since: number): HealthSample | undefined {
    return this.samples.find((s) => s.at >= since && s.status === 200);
  }

  /** Distinct reasons `check` failed with, in order of appearance. */
  reasons(check: string): string[] {
    return [...new Set(this.samples.map((s) => s.checks[check]).filter((r) => r && r !== "ok"))] as string[];
  }

  private async probe(): Promise<HealthSample> {
    const sent = Date.now();
    try {
      const res = await fetch(this.url, { signal: AbortSignal.timeout(5000) });
      const body = (await res.json().catch(() => ({}))) as { checks?: Record<string, string> };
      return { sent, at: Date.now(), status: res.status, checks: body.checks ?? {} };
    } catch {
      return { sent, at: Date.now(), status: 0, checks: {} };
    }
  }
}
