import { randomBytes, randomUUID } from "node:crypto";
import { mkdirSync, writeFileSync } from "node:fs";
import { mkdtemp } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import pg from "pg";
import { fromRoot } from "../../common/paths.js";
import { ConfigSecrets } from "../../core/config-secrets.js";
import { KeyRing } from "../../core/sealing.js";
import { newKeyLine } from "../../core/secrets-key-file.js";
import { createTestDatabase } from "../../test/support/postgres.js";
import { runCommand } from "../../test/support/process.js";

// bench/secrets: what sealing secrets at rest costs. (1) CPU per send of opening a config's
// secret (what the send activity adds), and per write of sealing one; (2) `webhooks secrets
// rekey` over N configs in PostgreSQL: configs re-sealed per second, the real command.
// Usage: node dist/bench/secrets/run.js [configs, default 5000]

const CONFIGS = Number(process.argv[2] ?? 5000);
const OPS = 50_000;

function perOpMicros(fn: (i: number) => void): number {
  for (let i = 0; i < 2000; i++) fn(i); // warm-up
  const start = process.hrtime.bigint();
  for (let i = 0; i < OPS; i++) fn(i);
  return Number(process.hrtime.bigint() - start) / 1000 / OPS;
}

async function main() {
  const secrets = new ConfigSecrets(new KeyRing([{ id: "k1", key: randomBytes(32) }]));
  const id = randomUUID();
  const plain = randomBytes(24).toString("base64");
  const sealed = secrets.seal(id, "secret", plain);
  const sealMicros = perOpMicros(() => secrets.seal(id, "secret", plain));
  const openMicros = perOpMicros(() => secrets.open(id, "secret", sealed));

  const db = await createTestDatabase();
  const dir = await mkdtemp(path.join(tmpdir(), "etp-bench-secrets-"));
  const file = path.join(dir, "keys");
  const k1 = newKeyLine("k1");
  writeFileSync(file, `${k1}\n${newKeyLine("k2")}\n`, { mode: 0o600 });
  const first = new ConfigSecrets(new KeyRing([{ id: "k1", key: Buffer.from(k1.split(" ")[1]!, "base64") }]));
  const client = new pg.Client({ connectionString: db.url });
  await client.connect();
  let rekeySeconds = 0;
  try {
    for (let i = 0; i < CONFIGS; i += 1000) {
      const ids = Array.from({ length: Math.min(1000, CONFIGS - i) }, () => randomUUID());
      await client.query(
        `INSERT INTO configs (id, endpoint, event_types, secret)
          SELECT id, 'https://bench.test/hook', '{a.b}', s FROM unnest($1::uuid[], $2::text[]) AS t(id, s)`,
        [ids, ids.map((c) => first.seal(c, "secret", randomBytes(24).toString("base64")))],
      );
    }
    const start = process.hrtime.bigint();
    const r = await runCommand(
      "webhooks",
      ["secrets", "rekey", "--storage-sqldb-conn-string", db.url, "--batch-size", "500"],
      { SECRETS_KEY_FILE: file },
    );
    rekeySeconds = Number(process.hrtime.bigint() - start) / 1e9;
    if (r.code !== 0) throw new Error(`rekey failed: ${r.stderr}`);
  } finally {
    await client.end();
    await db.drop();
  }

  const results = {
    sealMicrosPerOp: Number(sealMicros.toFixed(2)),
    openMicrosPerOp: Number(openMicros.toFixed(2)),
    rekeyConfigs: CONFIGS,
    rekeySeconds: Number(rekeySeconds.toFixed(2)),
    rekeyConfigsPerSecond: Math.round(CONFIGS / rekeySeconds),
  };
  console.table(results);
  mkdirSync(fromRoot("bench", "results"), { recursive: true });
  const out = fromRoot("bench", "results", "secrets.json");
  writeFileSync(out, `${JSON.stringify({ date: new Date().toISOString(), ...results }, null, 2)}\n`);
  console.log(`results written to ${out}`);
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
