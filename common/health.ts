import type { RequestHandler } from "express";

export type HealthCheck = () => Promise<unknown>;

/**
 * `/_healthcheck`: runs every dependency check (with a timeout) and answers 200
 * when all pass, 503 otherwise, naming what failed. A check that resolves to a string
 * adds it under `details` (e.g. the NATS partitions a consumer owns).
 */
export function healthHandler(checks: Record<string, HealthCheck>, timeoutMs = 2000): RequestHandler {
  return async (_req, res) => {
    const results: Record<string, string> = {};
    const details: Record<string, string> = {};
    await Promise.all(
      Object.entries(checks).map(async ([name, check]) => {
        let timer: NodeJS.Timeout | undefined;
        try {
          const value = await Promise.race([
            check(),
            new Promise((_, reject) => {
              // Late only once what arrived by the deadline was read: after a busy stretch of
              // the event loop the timer fires before the socket's answer is taken in.
              const late = () => reject(new Error(`no answer within ${timeoutMs} ms`));
              timer = setTimeout(() => setImmediate(late), timeoutMs);
            }),
          ]);
          results[name] = "ok";
          if (typeof value === "string" && value) details[name] = value;
        } catch (err) {
          results[name] = `error: ${(err as Error).message}`;
        } finally {
          clearTimeout(timer);
        }
      }),
    );
    const healthy = Object.values(results).every((r) => r === "ok");
    res.status(healthy ? 200 : 503).json({
      status: healthy ? "ok" : "unavailable",
      checks: results,
      ...(Object.keys(details).length > 0 ? { details } : {}),
    });
  };
}
