import { createCipheriv, createDecipheriv, hkdfSync, randomBytes } from "node:crypto";

// Values sealed at rest with AES-256-GCM under a key ring. A sealed value names the
// key that sealed it, so keys can rotate while older values stay readable, and it is
// bound (GCM associated data) to a context string such as "configs.secret:<row id>",
// so a sealed value copied to another row or column does not open there.
//
//   sealed1.<key id>.<iv, base64url>.<ciphertext then 16-byte tag, base64url>
//
// Nothing else in the product starts with "sealed1.": plain secrets are base64, which
// has no dots, so a plain value left by an older version is told apart without a flag.

const PREFIX = "sealed1";
const IV_BYTES = 12;
const TAG_BYTES = 16;
export const KEY_BYTES = 32;
/** Key ids: short, and free of the separator. */
export const KEY_ID_RE = /^[A-Za-z0-9_-]{1,64}$/;

export interface SealingKey {
  id: string;
  key: Buffer;
}

/** A value that cannot be opened, with what an operator needs to fix it (never the value). */
export class SealedValueError extends Error {
  constructor(
    message: string,
    /** The key id the value names, when it names one. */
    readonly keyId?: string,
  ) {
    super(message);
    this.name = "SealedValueError";
  }
}

/**
 * A plain value that would read back as a sealed one: refused on write under
 * --insecure-plaintext-secrets (stored as given, it could never be opened again).
 */
export class PlainValueLooksSealed extends Error {
  constructor(context: string) {
    super(
      `the value given for ${context.split(":")[0]} starts with "${PREFIX}.": stored in plain text (--insecure-plaintext-secrets) it would read back as a sealed value and never open; choose another`,
    );
    this.name = "PlainValueLooksSealed";
  }
}

export const isSealed = (stored: string): boolean => stored.startsWith(`${PREFIX}.`);

/** The key id a sealed value names; undefined for a plain value. */
export function sealedKeyId(stored: string): string | undefined {
  return isSealed(stored) ? stored.split(".")[1] : undefined;
}

const aad = (keyId: string, context: string) => Buffer.from(`${PREFIX}|${keyId}|${context}`);

export class KeyRing {
  private readonly keys = new Map<string, Buffer>();
  /** The key new values are sealed with: the last one given. */
  readonly newestId: string;

  constructor(keys: SealingKey[]) {
    if (keys.length === 0) throw new Error("a key ring needs at least one key");
    for (const k of keys) {
      if (!KEY_ID_RE.test(k.id)) throw new Error(`key id ${JSON.stringify(k.id)} must match ${KEY_ID_RE}`);
      if (k.key.length !== KEY_BYTES) throw new Error(`key "${k.id}" must be ${KEY_BYTES} bytes`);
      if (this.keys.has(k.id)) throw new Error(`key id "${k.id}" appears twice`);
      this.keys.set(k.id, k.key);
    }
    this.newestId = keys[keys.length - 1]!.id;
  }

  has(keyId: string): boolean {
    return this.keys.has(keyId);
  }

  get ids(): string[] {
    return [...this.keys.keys()];
  }

  /**
   * A key for another purpose (e.g. signing portal tokens) derived from ring key `keyId` by
   * HKDF-SHA256, so the ring's own bytes seal only secrets; undefined when the ring lacks it.
   */
  derive(keyId: string, purpose: string): Buffer | undefined {
    const key = this.keys.get(keyId);
    return key && Buffer.from(hkdfSync("sha256", key, Buffer.alloc(0), `${PREFIX}|${purpose}`, KEY_BYTES));
  }

  /** `plain` sealed under the newest key, bound to `context`. */
  seal(plain: string, context: string): string {
    const iv = randomBytes(IV_BYTES);
    const cipher = createCipheriv("aes-256-gcm", this.keys.get(this.newestId)!, iv);
    cipher.setAAD(aad(this.newestId, context));
    const data = Buffer.concat([cipher.update(plain, "utf8"), cipher.final(), cipher.getAuthTag()]);
    return [PREFIX, this.newestId, iv.toString("base64url"), data.toString("base64url")].join(".");
  }

  /** The plain value of a sealed one; throws SealedValueError when it cannot be opened here. */
  open(stored: string, context: string): string {
    const parts = stored.split(".");
    const [prefix, keyId, ivText, dataText] = parts;
    if (parts.length !== 4 || prefix !== PREFIX || !keyId || !ivText || !dataText)
      throw new SealedValueError(`the value of ${context} is not a sealed value`);
    const key = this.keys.get(keyId);
    if (!key)
      throw new SealedValueError(
        `${context} is sealed under key "${keyId}", which the key ring does not hold (it has ${this.ids.map((i) => `"${i}"`).join(", ")})`,
        keyId,
      );
    const iv = Buffer.from(ivText, "base64url");
    const data = Buffer.from(dataText, "base64url");
    try {
      if (iv.length !== IV_BYTES || data.length < TAG_BYTES) throw new Error("truncated");
      const decipher = createDecipheriv("aes-256-gcm", key, iv);
      decipher.setAAD(aad(keyId, context));
      decipher.setAuthTag(data.subarray(data.length - TAG_BYTES));
      return Buffer.concat([
        decipher.update(data.subarray(0, data.length - TAG_BYTES)),
        decipher.final(),
      ]).toString("utf8");
    } catch {
      throw new SealedValueError(
        `${context} does not open with key "${keyId}": the key ring holds other bytes under that id, or the value was altered or copied from another row`,
        keyId,
      );
    }
  }
}
