import { rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { newKeyLine } from "../../core/secrets-key-file.js";
import { stopTestTemporal } from "./temporal.js";

// Every webhooks process a test starts against PostgreSQL needs a key ring (or it refuses to
// start): one key file per test run, inherited through the environment. A test about keys
// passes its own, or SECRETS_KEY_FILE="" to have none.
const ownKeyFile = process.env.SECRETS_KEY_FILE
  ? undefined
  : path.join(os.tmpdir(), `webhooks-test-secrets-${process.pid}.keys`);
if (ownKeyFile) {
  writeFileSync(ownKeyFile, `${newKeyLine("test")}\n`, { mode: 0o600 });
  process.env.SECRETS_KEY_FILE = ownKeyFile;
}

// Mocha root hooks (loaded through .mocharc.json): shared servers stop after the run.
export const mochaHooks = {
  async afterAll(this: Mocha.Context) {
    this.timeout(30_000);
    await stopTestTemporal();
    if (ownKeyFile) rmSync(ownKeyFile, { force: true });
  },
};
