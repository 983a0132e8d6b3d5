import { type Logger, pino } from "pino";

export type { Logger };

/**
 * Structured JSON logs on stdout, one object a line. The level comes from the
 * caller (a flag) or LOG_LEVEL, default info.
 */
export function createLogger(name: string, level?: string): Logger {
  return pino({
    level: (level ?? process.env.LOG_LEVEL ?? "info").toLowerCase(),
    base: { service: name },
    timestamp: pino.stdTimeFunctions.isoTime,
  });
}
