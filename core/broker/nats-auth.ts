import { readFile } from "node:fs/promises";
import { type ConnectionOptions, credsAuthenticator } from "nats";
import { withoutCredentials } from "../../common/redact.js";

/** Credentials for NATS from flags; a URL's own `user:pass@` or `token@` is used when none is given. */
export interface NatsAuth {
  user?: string | undefined;
  password?: string | undefined;
  token?: string | undefined;
  /** A `.creds` file (JWT and NKey seed) of a decentralised account. */
  credsFile?: string | undefined;
}

/**
 * The connect options carrying the credentials, and the servers without them.
 * The client does not read credentials from a server URL itself, so they are
 * taken out of the URL here (`nats://user:pass@host` or `nats://token@host`);
 * the flags win over the URL.
 */
export async function natsCredentials(
  url: string,
  auth: NatsAuth,
): Promise<{ servers: string; options: Partial<ConnectionOptions> }> {
  const servers = withoutCredentials(url);
  if (auth.credsFile) {
    let creds: Buffer;
    try {
      creds = await readFile(auth.credsFile);
    } catch (err) {
      throw new Error(`cannot read the NATS credentials file ${auth.credsFile}: ${(err as Error).message}`);
    }
    return { servers, options: { authenticator: credsAuthenticator(new Uint8Array(creds)) } };
  }
  if (auth.token) return { servers, options: { token: auth.token } };
  if (auth.user) return { servers, options: { user: auth.user, pass: auth.password ?? "" } };
  const info = /^[a-z][a-z0-9+.-]*:\/\/([^/@]*)@/i.exec(url)?.[1];
  if (!info) return { servers, options: {} };
  const [user, password] = info.split(":").map((p) => decodeURIComponent(p));
  return {
    servers,
    options: password === undefined ? { token: user! } : { user: user!, pass: password },
  };
}
