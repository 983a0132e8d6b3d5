import type pg from "pg";
import type { ConfigSecrets } from "./config-secrets.js";

// A config's endpoint auth and custom headers as stored (table config_auth, one optional
// row per config), read and written in plain SQL like config rows (core/config-rows.ts),
// and a broker destination's credential (core/destinations.ts). Credential columns hold
// sealed values, each bound to its own column and config.

/** The columns holding a credential: sealed under the key ring, never returned in clear. */
export const SEALED_AUTH_COLUMNS = [
  "header_values",
  "basic_password",
  "bearer_token",
  "oauth_client_secret",
  "tls_private_key",
  "destination_secret",
] as const;
export type SealedAuthColumn = (typeof SEALED_AUTH_COLUMNS)[number];

/** What the seal of a credential is bound to: it opens only in its own row and column. */
export const authContext = (configId: string, column: SealedAuthColumn) =>
  `config_auth.${column}:${configId}`;

export interface StoredAuth {
  header_names: string[];
  /** Sealed JSON array of the header values, in the order of header_names. */
  header_values: string | null;
  basic_username: string | null;
  basic_password: string | null;
  bearer_token: string | null;
  oauth_token_url: string | null;
  oauth_client_id: string | null;
  oauth_client_secret: string | null;
  oauth_scope: string | null;
  oauth_audience: string | null;
  tls_certificate: string | null;
  tls_private_key: string | null;
  tls_ca_bundle: string | null;
  /** A broker destination's credential (core/destinations.ts): sealed JSON. */
  destination_secret: string | null;
}

export const AUTH_FIELDS: (keyof StoredAuth)[] = [
  "header_names",
  "header_values",
  "basic_username",
  "basic_password",
  "bearer_token",
  "oauth_token_url",
  "oauth_client_id",
  "oauth_client_secret",
  "oauth_scope",
  "oauth_audience",
  "tls_certificate",
  "tls_private_key",
  "tls_ca_bundle",
  "destination_secret",
];

export const EMPTY_AUTH: StoredAuth = Object.fromEntries(
  AUTH_FIELDS.map((f) => [f, f === "header_names" ? [] : null]),
) as unknown as StoredAuth;

/** The row with its HTTP auth removed and its destination credential kept (DELETE /configs/{id}/auth). */
export const withoutHttpAuth = (a: StoredAuth): StoredAuth => ({
  ...EMPTY_AUTH,
  destination_secret: a.destination_secret,
});

/** True when the row configures HTTP auth or headers (a broker destination's credential aside). */
export const hasHttpAuth = (a: StoredAuth) => !isEmptyAuth({ ...a, destination_secret: null });

/** True when the row configures nothing (it is deleted rather than kept empty). */
export const isEmptyAuth = (a: StoredAuth) =>
  a.header_names.length === 0 && AUTH_FIELDS.every((f) => f === "header_names" || a[f] === null);

/** The config's auth row (on the pool, or in a transaction that holds the config's row lock). */
export async function readStoredAuth(
  pool: pg.Pool | pg.PoolClient,
  configId: string,
): Promise<StoredAuth | null> {
  const { rows } = await pool.query<StoredAuth>({
    name: "config-auth-find",
    text: `SELECT ${AUTH_FIELDS.join(", ")} FROM config_auth WHERE config_id = $1::uuid`,
    values: [configId],
  });
  return rows[0] ?? null;
}

/** Stores the row (replacing it), or deletes it when it configures nothing (on the pool or in a transaction). */
export async function writeStoredAuth(
  pool: pg.Pool | pg.PoolClient,
  configId: string,
  auth: StoredAuth,
): Promise<void> {
  if (isEmptyAuth(auth)) {
    await pool.query("DELETE FROM config_auth WHERE config_id = $1::uuid", [configId]);
    return;
  }
  const values = AUTH_FIELDS.map((f) => auth[f]);
  await pool.query({
    name: "config-auth-upsert",
    text: `INSERT INTO config_auth (config_id, ${AUTH_FIELDS.join(", ")}, updated_at)
      VALUES ($1::uuid, ${AUTH_FIELDS.map((_, i) => `$${i + 2}`).join(", ")}, now())
      ON CONFLICT (config_id) DO UPDATE SET ${AUTH_FIELDS.map((f) => `${f} = EXCLUDED.${f}`).join(", ")}, updated_at = now()`,
    values: [configId, ...values],
  });
}

/** The endpoint credentials of a config, opened: what a send needs. */
export interface EndpointAuth {
  headers: [name: string, value: string][];
  basic?: { username: string; password: string };
  bearer?: string;
  oauth2?: { tokenUrl: string; clientId: string; clientSecret: string; scope?: string; audience?: string };
  /** Client certificate and key (mutual TLS), and the CA bundle that replaces the system roots for the endpoint. */
  tls?: { certificate?: string; privateKey?: string; caBundle?: string };
}

/** Opens every credential of the row; throws SealedValueError (naming the key id) when one cannot be opened. */
export function openStoredAuth(secrets: ConfigSecrets, configId: string, a: StoredAuth): EndpointAuth {
  const open = (column: SealedAuthColumn, stored: string) =>
    secrets.openIn(authContext(configId, column), stored);
  const values: string[] = a.header_values ? JSON.parse(open("header_values", a.header_values)) : [];
  return {
    headers: a.header_names.map((name, i) => [name, values[i] ?? ""]),
    ...(a.basic_username !== null && a.basic_password !== null
      ? { basic: { username: a.basic_username, password: open("basic_password", a.basic_password) } }
      : {}),
    ...(a.bearer_token !== null ? { bearer: open("bearer_token", a.bearer_token) } : {}),
    ...(a.oauth_token_url !== null && a.oauth_client_id !== null && a.oauth_client_secret !== null
      ? {
          oauth2: {
            tokenUrl: a.oauth_token_url,
            clientId: a.oauth_client_id,
            clientSecret: open("oauth_client_secret", a.oauth_client_secret),
            ...(a.oauth_scope !== null ? { scope: a.oauth_scope } : {}),
            ...(a.oauth_audience !== null ? { audience: a.oauth_audience } : {}),
          },
        }
      : {}),
    ...(a.tls_certificate !== null || a.tls_ca_bundle !== null
      ? {
          tls: {
            ...(a.tls_certificate !== null && a.tls_private_key !== null
              ? { certificate: a.tls_certificate, privateKey: open("tls_private_key", a.tls_private_key) }
              : {}),
            ...(a.tls_ca_bundle !== null ? { caBundle: a.tls_ca_bundle } : {}),
          },
        }
      : {}),
  };
}
