import { isSealed, type KeyRing, PlainValueLooksSealed, SealedValueError, sealedKeyId } from "./sealing.js";

// A config's signing secrets as stored: sealed under the key ring, each bound to its row
// and column, or plain with --insecure-plaintext-secrets. A plain value written by an
// older version still opens (the service seals those at startup, core/secrets-startup.ts).

export type SecretColumn = "secret" | "previous_secret";

/** Values per key id the startup check tries to open (one alone cannot tell a bad key from a bad row). */
export const SAMPLES_PER_KEY = 5;

/** Rows grouped by `group`, in order. */
export function byKey<R>(rows: R[], group: (r: R) => string): Map<string, R[]> {
  const groups = new Map<string, R[]>();
  for (const r of rows) groups.set(group(r), [...(groups.get(group(r)) ?? []), r]);
  return groups;
}

/** One stored value sealed under a key, as the startup check samples it. */
export interface KeySample {
  /** Its row and column, for the log (never the value). */
  row: string;
  open: () => void;
}

/** What the seal of a config secret is bound to: a sealed value opens only in its own row and column. */
export const secretContext = (configId: string, column: SecretColumn) => `configs.${column}:${configId}`;

export class ConfigSecrets {
  /** `ring` null: --insecure-plaintext-secrets, values are stored as given. */
  constructor(readonly ring: KeyRing | null) {}

  seal(configId: string, column: SecretColumn, plain: string): string {
    return this.sealIn(secretContext(configId, column), plain);
  }

  /** The plain secret; throws SealedValueError (naming the key id) when it cannot be opened. */
  open(configId: string, column: SecretColumn, stored: string): string {
    return this.openIn(secretContext(configId, column), stored);
  }

  /** `plain` sealed for `context` (a row and column, e.g. core/endpoint-auth-rows.ts's authContext). */
  sealIn(context: string, plain: string): string {
    if (this.ring) return this.ring.seal(plain, context);
    if (isSealed(plain)) throw new PlainValueLooksSealed(context);
    return plain;
  }

  /** The value stored for `context`, opened; a plain value is returned as it is. */
  openIn(context: string, stored: string): string {
    if (!isSealed(stored)) return stored;
    if (!this.ring)
      throw new SealedValueError(
        `${context} is sealed under key "${sealedKeyId(stored)}", but this process runs with --insecure-plaintext-secrets and no key ring`,
        sealedKeyId(stored),
      );
    return this.ring.open(stored, context);
  }

  /** Both secrets of a config row, opened. */
  openConfig<C extends { id: string; secret: string; previousSecret: string | null }>(c: C): C {
    return {
      ...c,
      secret: this.open(c.id, "secret", c.secret),
      previousSecret: c.previousSecret === null ? null : this.open(c.id, "previous_secret", c.previousSecret),
    };
  }

  /**
   * Throws unless this process can open values sealed under `keyId`: a ring holding it,
   * with which at least one of `samples` (a few such values, from different rows) opens.
   * Returns the samples that do not open. `what` and `where` name the values in the
   * message ("secrets", "3 stored secret(s), e.g. config ...").
   */
  checkOpens(keyId: string, what: string, where: string, samples: KeySample[]): KeySample[] {
    if (!this.ring)
      throw new Error(
        `${what} are sealed under key "${keyId}" (${where}) but --insecure-plaintext-secrets gives no key ring: pass --secrets-key-file with that key`,
      );
    if (!this.ring.has(keyId))
      throw new Error(
        `${what} are sealed under key "${keyId}" (${where}), which the key ring (${this.ring.ids.join(", ")}) does not hold: add that key to the key file`,
      );
    const unreadable: KeySample[] = [];
    let error = "";
    for (const s of samples) {
      try {
        s.open();
      } catch (err) {
        unreadable.push(s);
        error = (err as Error).message;
      }
    }
    // None of several rows opens: the ring holds other bytes under that id. One row that
    // does not open while others do (or alone) is that row's problem, not everyone's.
    if (samples.length > 1 && unreadable.length === samples.length)
      throw new Error(`key "${keyId}" of the key ring does not open ${where}: ${error}`);
    return unreadable;
  }
}
