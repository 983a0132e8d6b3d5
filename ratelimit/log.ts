// The service's logger: LOG_LEVEL sets the level; LOG_FORMAT=json writes one JSON
// object a line with `@message`, `@timestamp` and `level`; the default is text.

import { type Logger, pino } from "pino";
import type { Settings } from "./settings/environment.js";

function textLine(line: string): string {
  try {
    const o = JSON.parse(line) as Record<string, unknown>;
    const { time, level, msg, ...rest } = o;
    delete rest.pid;
    delete rest.hostname;
    const extra = Object.entries(rest)
      .map(
        ([k, v]) =>
          `${k}=${typeof v === "string" ? (/\s/.test(v) ? JSON.stringify(v) : v) : JSON.stringify(v)}`,
      )
      .join(" ");
    return `${time} ${String(level).toUpperCase()} ${msg ?? ""}${extra ? ` ${extra}` : ""}\n`;
  } catch {
    return line;
  }
}

export function createServiceLogger(settings: Pick<Settings, "logLevel" | "logFormat">): Logger {
  const json = settings.logFormat === "json";
  const stream = {
    write(line: string) {
      process.stderr.write(json ? line : textLine(line));
    },
  };
  return pino(
    {
      level: settings.logLevel,
      base: null,
      messageKey: json ? "@message" : "msg",
      timestamp: json
        ? () => `,"@timestamp":"${new Date().toISOString()}"`
        : () => `,"time":"${new Date().toISOString()}"`,
      formatters: { level: (label) => ({ level: label }) },
    },
    stream,
  );
}
