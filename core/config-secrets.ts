import { isSealed, type KeyRing, SealedValueError, sealedKeyId } from "./sealing.js";

// A config's signing secrets as stored: sealed under the key ring, each bound to its row
// and column, or plain with --insecure-plaintext-secrets. A plain value written by an
// older version still opens (the service seals those at startup, core/secrets-startup.ts).

export type SecretColumn = "secret" | "previous_secret";

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
    return this.ring ? this.ring.seal(plain, context) : plain;
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
}
