import { type Command, Option } from "commander";
import { listenArg } from "./flags.js";
import { fromRoot } from "./paths.js";

/**
 * The options every HTTP service command shares: where it listens, how much
 * it logs, and its database (the same flags in every command).
 */
export function addServiceOptions(cmd: Command, defaultListen: string): Command {
  return cmd
    .addOption(
      new Option("--listen <addr>", "HTTP bind address")
        .default(listenArg(defaultListen), defaultListen)
        .argParser(listenArg),
    )
    .addOption(
      new Option("--log-level <level>", "log level")
        .choices(["trace", "debug", "info", "warn", "error"])
        .default("info")
        .env("LOG_LEVEL"),
    )
    .addOption(
      new Option(
        "--data-dir <dir>",
        "folder of the embedded database (used when no connection string is given)",
      ).default(fromRoot(".data")),
    )
    .option("--auto-migrate", "run database migrations at startup", false)
    .addOption(
      new Option(
        "--storage-sqldb-conn-string <url>",
        "PostgreSQL connection string (default: embedded PGlite database)",
      ).env("DATABASE_URL"),
    );
}
