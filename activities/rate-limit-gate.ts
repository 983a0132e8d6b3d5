import * as grpc from "@grpc/grpc-js";
import type { Logger } from "../common/logger.js";
import {
  type RateLimitResponse,
  RateLimitResponse_Code,
  type RateLimitResponse_DescriptorStatus,
  RateLimitServiceClient,
} from "../proto/gen/envoy/service/ratelimit/v3/rls.js";

/** Wait used when the service says OVER_LIMIT without a reset time. */
const DEFAULT_WAIT_MS = 1000;
const CALL_TIMEOUT_MS = 2000;
/**
 * After a call fails (the service down, or hanging past CALL_TIMEOUT_MS), sends go
 * without asking (fail open) for this long, instead of each waiting out a timeout of its
 * own in line behind the others of its config: every step of a send stays short.
 */
const UNAVAILABLE_FOR_MS = 5000;
/**
 * Asks for one config or host go one at a time; a send that waited this long for its turn
 * gives up its place and asks again after DEFAULT_WAIT_MS (a wait: nothing counted).
 */
const TURN_WAIT_MS = 5000;
/**
 * No send starts this close to the end of a window: its POST could arrive in
 * the next window, beside that window's own sends, and a receiver counting by
 * window would see more than the configured rate.
 */
export const LATE_IN_WINDOW_MS = 100;
/** Wake just after the window turns, not just before. */
const AFTER_RESET_MS = 5;

export interface RateLimitGate {
  /**
   * Takes one permission for a send of this config (of this tenant) to this host: 0 when
   * the send may go now (the hit is counted), else how long to wait before asking again
   * (nothing counted).
   */
  acquire(send: SendKeys): Promise<number>;
  close(): void;
}

/** What a send is counted against. */
export interface SendKeys {
  configId: string;
  tenantId: string;
  endpointHost: string;
}

/**
 * Outbound rate limiting through the rate limit service, in domain `domain` with two
 * descriptors, `config_id` and `[tenant_id, endpoint_host]`, so rules can cap one
 * subscription or one tenant's sends to one receiving host (a host's budget is per
 * tenant: one tenant's burst never spends another's). Each permission is a peek (per-descriptor
 * hits_addend 0: counts nothing) and, when every limit has room, a take (one
 * hit). A waiting delivery therefore costs no quota. Within a process, the
 * peek and take of one config or host never interleave with another's; only
 * senders in different processes racing for the last permission make the
 * loser's other descriptors count one hit (STOP_CACHE_KEY_INCREMENT_WHEN_OVERLIMIT
 * on the service avoids even that). An unreachable or hanging service does not
 * stop deliveries (fail open, logged) nor keeps a send waiting in line: every
 * step is bounded (UNAVAILABLE_FOR_MS, TURN_WAIT_MS).
 */
export function createRateLimitGate(address: string, domain: string, logger: Logger): RateLimitGate {
  const client = new RateLimitServiceClient(address, grpc.credentials.createInsecure());
  const ask = (send: SendKeys, peek: boolean): Promise<RateLimitResponse> => {
    const descriptor = (...entries: [string, string][]) => ({
      entries: entries.map(([key, value]) => ({ key, value })),
      limit: undefined,
      hitsAddend: peek ? 0n : undefined,
    });
    const request = {
      domain,
      descriptors: [
        descriptor(["config_id", send.configId]),
        descriptor(["tenant_id", send.tenantId], ["endpoint_host", send.endpointHost]),
      ],
      hitsAddend: 1,
    };
    return new Promise((resolve, reject) =>
      client.shouldRateLimit(
        request,
        new grpc.Metadata(),
        { deadline: Date.now() + CALL_TIMEOUT_MS },
        (err, res) => (err ? reject(err) : resolve(res!)),
      ),
    );
  };
  let unavailableUntil = 0;
  const failOpen = (err: unknown) => {
    if (Date.now() >= unavailableUntil)
      logger.warn(
        { address, err: (err as Error).message, forMs: UNAVAILABLE_FOR_MS },
        "rate limit service unavailable: sending without asking",
      );
    unavailableUntil = Date.now() + UNAVAILABLE_FOR_MS;
    return 0;
  };
  const locks = new KeyedLock();
  return {
    async acquire(send) {
      if (Date.now() < unavailableUntil) return 0;
      const turn = await locks.with(
        [`config_id=${send.configId}`, `tenant_id=${send.tenantId}/endpoint_host=${send.endpointHost}`],
        () => permit(send),
        TURN_WAIT_MS,
      );
      return turn.ran ? turn.value : DEFAULT_WAIT_MS;
    },
    close: () => client.close(),
  };

  async function permit(send: SendKeys): Promise<number> {
    // The service failed while this send waited for its turn.
    if (Date.now() < unavailableUntil) return 0;
    let peek: RateLimitResponse;
    try {
      peek = await ask(send, true);
    } catch (err) {
      return failOpen(err);
    }
    const now = Date.now();
    const limited = peek.statuses.filter((s) => s.currentLimit);
    const full = limited.filter(
      (s) => s.code === RateLimitResponse_Code.OVER_LIMIT || s.limitRemaining === 0,
    );
    if (peek.overallCode === RateLimitResponse_Code.OVER_LIMIT || full.length) return waitFor(full, now);
    const late = limited.filter((s) => resetAt(s, now) - now < LATE_IN_WINDOW_MS);
    if (late.length) return waitFor(late, now);
    let taken: RateLimitResponse;
    try {
      taken = await ask(send, false);
    } catch (err) {
      return failOpen(err);
    }
    if (taken.overallCode !== RateLimitResponse_Code.OVER_LIMIT) return 0;
    // Another process took the last permission between the peek and the take.
    return waitFor(
      taken.statuses.filter((s) => s.code === RateLimitResponse_Code.OVER_LIMIT),
      Date.now(),
    );
  }
}

/**
 * Runs tasks one at a time per key; a task holding several keys waits for all of them,
 * at most `maxWaitMs`: then it does not run, and its place in line passes on once the
 * tasks before it are done (so the ones after it still never overlap those).
 */
class KeyedLock {
  private readonly tails = new Map<string, Promise<void>>();

  async with<T>(
    keys: string[],
    task: () => Promise<T>,
    maxWaitMs: number,
  ): Promise<{ ran: true; value: T } | { ran: false }> {
    let release!: () => void;
    const held = new Promise<void>((r) => {
      release = r;
    });
    const before = Promise.all(keys.map((k) => this.tails.get(k) ?? Promise.resolve()));
    for (const k of keys) this.tails.set(k, held);
    const done = () => {
      release();
      for (const k of keys) if (this.tails.get(k) === held) this.tails.delete(k);
    };
    let timer: NodeJS.Timeout | undefined;
    const turn = await Promise.race([
      before.then(() => true),
      new Promise<false>((r) => {
        timer = setTimeout(() => r(false), maxWaitMs);
      }),
    ]);
    clearTimeout(timer);
    if (!turn) {
      void before.then(done);
      return { ran: false };
    }
    try {
      return { ran: true, value: await task() };
    } finally {
      done();
    }
  }
}

/**
 * When the status's window ends. The service reports whole seconds until the
 * reset of a window aligned on the epoch (one second: always 1), so the reset
 * is the next boundary: floor(now in seconds) + that.
 */
function resetAt(s: RateLimitResponse_DescriptorStatus, now: number): number {
  const d = s.durationUntilReset;
  if (!d) return now + DEFAULT_WAIT_MS;
  const seconds = Number(d.seconds) + d.nanos / 1e9;
  return (Math.floor(now / 1000) + seconds) * 1000;
}

/** Milliseconds until every given window has turned (at least 1). */
function waitFor(statuses: RateLimitResponse_DescriptorStatus[], now: number): number {
  if (statuses.length === 0) return DEFAULT_WAIT_MS;
  const until = Math.max(...statuses.map((s) => resetAt(s, now)));
  return Math.max(1, Math.ceil(until - now) + AFTER_RESET_MS);
}
