import { Command, Option } from "commander";
import express from "express";
import { openDatabase } from "../common/db/database.js";
import { type ListenAddress, listArg, positiveIntArg } from "../common/flags.js";
import { healthHandler } from "../common/health.js";
import { answerClientErrors } from "../common/http-client-errors.js";
import { listen } from "../common/http-server.js";
import { createLogger } from "../common/logger.js";
import { addServiceOptions } from "../common/service-options.js";
import { Shutdown } from "../common/shutdown.js";
import { VERSION } from "../common/version.js";
import { ConfigSecrets } from "../core/config-secrets.js";
import { loadKeyRing } from "../core/secrets-startup.js";
import { createEntityRouter, renderClientError, requireCredentials } from "../entity/http/express-adapter.js";
import { entityFastPath } from "../entity/http/fast-path.js";
import { PrismaEntityManager } from "../entity/prisma/prisma-entity-manager.js";
import { bindProductTables, PRODUCT_ALIASES } from "../entity/product-tables.js";
import { EntityServer } from "../entity/server/server.js";
import { insecurePlaintextSecretsOption, secretsKeyFileOption } from "./secrets-options.js";

// `entity-server`: the product's tables over the entity REST protocol
// (XML or JSON), read-only unless an alias is named in --writable.

interface Flags {
  listen: ListenAddress;
  logLevel: string;
  dataDir: string;
  autoMigrate: boolean;
  storageSqldbConnString?: string;
  writable?: string[];
  storageSqldbPoolMax: number;
  username?: string;
  password?: string;
  secretsKeyFile?: string;
  insecurePlaintextSecrets: boolean;
}

async function run(o: Flags): Promise<void> {
  if ((o.username === undefined) !== (o.password === undefined)) {
    throw new Error("--username and --password go together");
  }
  const logger = createLogger("entity-server", o.logLevel);
  const shutdown = new Shutdown(logger);
  logger.info(
    { database: o.storageSqldbConnString ? "postgresql" : "embedded", autoMigrate: o.autoMigrate },
    "opening database",
  );
  const db = await openDatabase({
    // An empty DATABASE_URL means "not set": use the embedded database.
    connString: o.storageSqldbConnString || undefined,
    embeddedDataDir: o.dataDir,
    autoMigrate: o.autoMigrate,
    poolMax: o.storageSqldbPoolMax,
    logger,
  });
  shutdown.add("database", () => db.close());

  // Lists are read in plain SQL on the pool Prisma runs on, where that gives exactly its rows.
  const server = new EntityServer(new PrismaEntityManager(db.prisma, { pool: db.pool }), {}, logger);
  // Secrets written through a writable config alias are sealed as the webhooks service seals them.
  const sealing = o.secretsKeyFile || o.insecurePlaintextSecrets;
  const secrets = sealing
    ? new ConfigSecrets(
        await loadKeyRing(
          {
            secretsKeyFile: o.secretsKeyFile || undefined,
            insecurePlaintextSecrets: o.insecurePlaintextSecrets,
            dataDir: o.dataDir,
          },
          false,
          logger,
        ),
      )
    : undefined;
  bindProductTables(server, o.writable ?? [], secrets);
  if (o.username !== undefined && o.password !== undefined) server.setCredentials(o.username, o.password);

  const app = express();
  app.disable("x-powered-by");
  app.set("etag", false);
  app.get("/_healthcheck", healthHandler({ database: () => db.prisma.$queryRaw`SELECT 1` }));
  // Aliases and field names are for authenticated callers only; the health check stays open for probes.
  app.get("/_info", requireCredentials(server, { alias: "_info", action: "info" }), (_req, res) => {
    res.json({
      service: "entity-server",
      version: VERSION,
      aliases: Object.fromEntries(server.aliases().map((a) => [a, server.describe(a)])),
    });
  });
  app.use(createEntityRouter(server, { logger }));

  // Plain entity reads are answered without express's per-request set-up, as the router would answer them.
  const http = await listen(entityFastPath(server, app, { logger }), o.listen);
  answerClientErrors(http.server, renderClientError);
  shutdown.add("http", () => http.close());
  logger.info(
    {
      listen: `${o.listen.host}:${http.port}`,
      aliases: server.aliases(),
      writable: o.writable ?? [],
      auth: o.username !== undefined,
    },
    "entity server listening",
  );
}

async function main(argv: string[]): Promise<void> {
  const program = new Command("entity-server");
  addServiceOptions(program, ":8090")
    .description(
      `Serves the product's tables (${Object.keys(PRODUCT_ALIASES).join(", ")}) as REST entities in XML or JSON; read-only unless --writable`,
    )
    .version(VERSION, "-v, --version", "print the version")
    .showHelpAfterError("(run with --help for usage)")
    .configureOutput({ outputError: (text, write) => write(text) })
    .addOption(
      new Option(
        "--storage-sqldb-pool-max <n>",
        "PostgreSQL connections in the pool (the embedded database caps it at 4)",
      )
        .default(16)
        .argParser(positiveIntArg),
    )
    .addOption(
      new Option(
        "--writable <aliases>",
        "aliases that accept insert/update/delete, comma-separated or repeated",
      ).argParser(listArg),
    )
    .addOption(
      new Option("--username <name>", "require HTTP Basic credentials: user name").env(
        "ENTITY_SERVER_USERNAME",
      ),
    )
    .addOption(
      new Option("--password <secret>", "require HTTP Basic credentials: password").env(
        "ENTITY_SERVER_PASSWORD",
      ),
    )
    .addOption(secretsKeyFileOption())
    .addOption(insecurePlaintextSecretsOption())
    .action(async (o: Flags) => run(o));
  await program.parseAsync(argv);
}

main(process.argv).catch((err: Error) => {
  process.stderr.write(`entity-server: ${err.message}\n`);
  process.exit(1);
});
