import { randomBytes } from "node:crypto";
import { link, mkdir, readFile, stat, unlink, writeFile } from "node:fs/promises";
import path from "node:path";
import { KEY_BYTES, KEY_ID_RE, KeyRing } from "./sealing.js";

// The key file of --secrets-key-file: text, one key a line, `<id> <base64 of 32 bytes>`;
// blank lines and lines starting with `#` are ignored. The LAST key seals new writes, so
// rotating is appending a line (older keys stay to open what they sealed until
// `webhooks secrets rekey` moved every row off them). Errors name the file and the line,
// never the key bytes.

const HEADER =
  "# webhooks secrets key ring: one key a line, `<id> <base64 of 32 random bytes>`.\n" +
  "# The last key seals new secrets; older ones open what they sealed. See docs/webhooks/security.md#secrets-at-rest.\n";

/** A new key line: the id (UTC time when none is given) and 32 random bytes. */
export function newKeyLine(id = `k${new Date().toISOString().replace(/\D/g, "").slice(0, 14)}`): string {
  if (!KEY_ID_RE.test(id)) throw new Error(`key id ${JSON.stringify(id)} must match ${KEY_ID_RE}`);
  return `${id} ${randomBytes(KEY_BYTES).toString("base64")}`;
}

/** The key ring a key file's text describes; `where` names the file in errors. */
export function parseKeyFile(text: string, where: string): KeyRing {
  const keys: { id: string; key: Buffer }[] = [];
  const seen = new Set<string>();
  text.split(/\r?\n/).forEach((raw, i) => {
    const line = raw.trim();
    if (line === "" || line.startsWith("#")) return;
    const at = `${where}, line ${i + 1}`;
    const fields = line.split(/\s+/);
    if (fields.length !== 2)
      throw new Error(`${at}: expected "<id> <base64 key>", got ${fields.length} fields`);
    const [id, encoded] = fields as [string, string];
    if (!KEY_ID_RE.test(id))
      throw new Error(`${at}: key id ${JSON.stringify(id)} must be 1-64 letters, digits, "_" or "-"`);
    if (seen.has(id)) throw new Error(`${at}: key id "${id}" appears twice`);
    const key = Buffer.from(encoded, "base64");
    if (!/^[A-Za-z0-9+/]+={0,2}$/.test(encoded) || key.length !== KEY_BYTES)
      throw new Error(`${at}: key "${id}" must be standard base64 of ${KEY_BYTES} bytes`);
    seen.add(id);
    keys.push({ id, key });
  });
  if (keys.length === 0) throw new Error(`${where} holds no key`);
  return new KeyRing(keys);
}

export interface LoadedKeyFile {
  ring: KeyRing;
  /** Set when group or others may read the file. */
  warning?: string;
}

export async function readKeyFile(file: string, flag = "--secrets-key-file"): Promise<LoadedKeyFile> {
  const where = `${flag} ${file}`;
  let text: string;
  try {
    text = await readFile(file, "utf8");
  } catch (err) {
    throw new Error(`${where}: cannot read the key file: ${(err as NodeJS.ErrnoException).code ?? err}`);
  }
  const ring = parseKeyFile(text, where);
  const mode = (await stat(file)).mode & 0o777;
  return mode & 0o077
    ? { ring, warning: `${where} may be read by other users (mode ${mode.toString(8)}); chmod 600 it` }
    : { ring };
}

/**
 * The key file at `file`, created with one new key when missing (mode 600). `created`
 * says which: two processes starting together both end up with the one file.
 */
export async function ensureKeyFile(file: string): Promise<LoadedKeyFile & { created: boolean }> {
  await mkdir(path.dirname(file), { recursive: true });
  // Written aside, then linked into place: a reader never sees a half-written file.
  const aside = `${file}.${process.pid}.new`;
  await writeFile(aside, `${HEADER}${newKeyLine()}\n`, { mode: 0o600 });
  let created = true;
  try {
    await link(aside, file);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== "EEXIST") throw err;
    created = false;
  } finally {
    await unlink(aside);
  }
  return { ...(await readKeyFile(file, "generated key file")), created };
}
