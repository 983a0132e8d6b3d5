import { ensureKeyFile } from "../../core/secrets-key-file.js";
import { localPostgresKeyFile } from "../../core/secrets-startup.js";

// Every webhooks process a test or benchmark starts against PostgreSQL needs a key ring
// (it refuses to start without one). They inherit, through the environment, the key the
// stack of `npm start` uses on the machine's PostgreSQL: the stack test runs on that shared
// database, where rows sealed under a key of the run's own would stop the next start.
// A test about keys passes its own, or SECRETS_KEY_FILE="" to have none.
if (!process.env.SECRETS_KEY_FILE) {
  const file = localPostgresKeyFile();
  await ensureKeyFile(file);
  process.env.SECRETS_KEY_FILE = file;
}
