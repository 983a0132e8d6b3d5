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
              timer = setTimeout(() => reject(new Error(`no answer within ${timeoutMs} ms`)), timeoutMs);
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
