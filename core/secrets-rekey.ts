import path from "node:path";
import { openDatabase } from "../common/db/database.js";
import { createLogger } from "../common/logger.js";
import { countPendingAuth, resealAuth } from "./auth-resealing.js";
import { ConfigSecrets } from "./config-secrets.js";
import { countPending, resealConfigs } from "./secret-resealing.js";
import { readKeyFile } from "./secrets-key-file.js";
import { checkSealingKeys } from "./secrets-startup.js";

// `webhooks secrets rekey`: every config secret re-sealed under the newest key of the
// key file, with a progress line per batch. Exits non-zero when rows remain under older
// keys afterwards (written meanwhile by a process whose ring lacks the newest key).

export interface RekeyOptions {
  keyFile: string;
  connString?: string | undefined;
  dataDir: string;
  batchSize: number;
  pauseMs: number;
}

export async function runRekey(opts: RekeyOptions): Promise<void> {
  const out = (line: string) => process.stdout.write(`rekey: ${line}\n`);
  const { ring, warning } = await readKeyFile(opts.keyFile);
  if (warning) out(`warning: ${warning}`);
  const logger = createLogger("webhooks-rekey", "warn");
  const db = await openDatabase({
    connString: opts.connString,
    embeddedDataDir: path.join(opts.dataDir, "pglite"),
    autoMigrate: false,
    logger,
  });
  try {
    const secrets = new ConfigSecrets(ring);
    await checkSealingKeys(db.pool, secrets);
    const run = await resealConfigs(db.pool, secrets, {
      plainOnly: false,
      batchSize: opts.batchSize,
      pauseMs: opts.pauseMs,
      onBatch: (p) =>
        out(
          `${p.moved + p.changedMeanwhile}/${p.total} configs done, ${p.moved} re-sealed under key "${ring.newestId}"` +
            (p.changedMeanwhile ? `, ${p.changedMeanwhile} changed meanwhile` : ""),
        ),
    });
    const auth = await resealAuth(db.pool, secrets, {
      plainOnly: false,
      batchSize: opts.batchSize,
      pauseMs: opts.pauseMs,
      onBatch: (p) =>
        out(`${p.moved + p.changedMeanwhile}/${p.total} endpoint credential rows done, ${p.moved} re-sealed`),
    });
    const left = (await countPending(db.pool, ring, false)) + (await countPendingAuth(db.pool, ring, false));
    if (auth.total > 0) out(`${auth.moved} endpoint credential rows re-sealed under key "${ring.newestId}"`);
    out(
      `${run.moved} configs re-sealed under key "${ring.newestId}"; ${left} left under other keys or plain`,
    );
    if (left > 0)
      throw new Error(
        `${left} configs were written meanwhile under an older key: a process runs with a key file whose newest key is not "${ring.newestId}"; restart it with this key file, then run rekey again`,
      );
  } finally {
    await db.close();
  }
}
