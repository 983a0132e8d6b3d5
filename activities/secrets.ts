import { randomBytes } from "node:crypto";

/** A new config secret: base64 of 24 random bytes. */
export const generateSecret = (): string => randomBytes(24).toString("base64");

/** True when the text is standard base64 of exactly 24 bytes. */
export function isValidSecret(secret: string): boolean {
  return /^[A-Za-z0-9+/]{32}$/.test(secret) && Buffer.from(secret, "base64").length === 24;
}

/** Secrets to sign with now: the current one, plus the rotated-out one during its overlap window. */
export function activeSecrets(
  c: { secret: string; previousSecret: string | null; previousSecretExpiresAt: Date | null },
  now: Date,
): string[] {
  return c.previousSecret && c.previousSecretExpiresAt && c.previousSecretExpiresAt > now
    ? [c.secret, c.previousSecret]
    : [c.secret];
}
