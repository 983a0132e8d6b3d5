// Where a Redis store is, from KVSTORE_URL read according to KVSTORE_TYPE (and
// KVSTORE_SOCKET_TYPE): one server, a Sentinel group (master name + sentinels) or
// the nodes of a Redis Cluster. Parsed once when the settings are read, so a
// malformed address stops the service at start with the variable's name.

export interface HostPort {
  host: string;
  port: number;
}

export type RedisAddress =
  | {
      type: "single";
      /** A unix socket path, or undefined for TCP. */
      path?: string;
      host?: string;
      port?: number;
      username?: string;
      password?: string;
      db?: number;
      tls?: boolean;
    }
  | { type: "sentinel"; masterName: string; sentinels: HostPort[] }
  | { type: "cluster"; nodes: HostPort[] };

/** `host:port`, `[v6]:port`; an empty host means 127.0.0.1. Undefined when malformed. */
export function parseHostPort(text: string): HostPort | undefined {
  const m = /^\[?([^\]]*?)\]?:(\d{1,5})$/.exec(text.trim());
  if (!m) return undefined;
  const port = Number(m[2]);
  if (port < 1 || port > 65535) return undefined;
  return { host: m[1] || "127.0.0.1", port };
}

const list = (url: string) =>
  url
    .split(",")
    .map((s) => s.trim())
    .filter(Boolean);

/** Parses `url` for `type`; throws an Error whose message names `variable` and the expected form. */
export function parseRedisAddress(
  variable: string,
  type: "single" | "sentinel" | "cluster",
  socketType: string,
  url: string,
): RedisAddress {
  const bad = (expected: string) =>
    new Error(
      `${variable}=${JSON.stringify(url)}: malformed for ${variable.replace(/_URL$/, "_TYPE")}=${type}, expected ${expected}`,
    );
  const trimmed = url.trim();

  if (type === "sentinel") {
    // As the reference: the master's name, then the sentinels' addresses (at least one).
    const items = list(trimmed);
    const expected = "<master name>,<sentinel host:port>[,<sentinel host:port>...]";
    if (items.length < 2) throw bad(expected);
    const [masterName, ...rest] = items as [string, ...string[]];
    if (parseHostPort(masterName))
      throw bad(`${expected} (the first item is the master's name, not an address)`);
    const sentinels = rest.map((s) => {
      const hp = parseHostPort(s);
      if (!hp) throw bad(`${expected} (${JSON.stringify(s)} is not host:port)`);
      return hp;
    });
    return { type, masterName, sentinels };
  }

  if (type === "cluster") {
    const expected = "comma-separated host:port of the cluster's nodes";
    const items = list(trimmed);
    if (!items.length) throw bad(expected);
    const nodes = items.map((s) => {
      const hp = parseHostPort(s);
      if (!hp) throw bad(`${expected} (${JSON.stringify(s)} is not host:port)`);
      return hp;
    });
    return { type, nodes };
  }

  if (/^rediss?:\/\//.test(trimmed)) {
    let u: URL;
    try {
      u = new URL(trimmed);
    } catch {
      throw bad("redis://[user:password@]host:port[/db]");
    }
    const db = u.pathname.replace(/^\//, "");
    if (db && !/^\d+$/.test(db)) throw bad("redis://[user:password@]host:port[/db] with a numeric db");
    return {
      type,
      host: u.hostname.replace(/^\[|\]$/g, ""),
      port: Number(u.port || 6379),
      username: u.username ? decodeURIComponent(u.username) : undefined,
      password: u.password ? decodeURIComponent(u.password) : undefined,
      db: db ? Number(db) : undefined,
      tls: u.protocol === "rediss:",
    };
  }
  if (socketType === "unix" || trimmed.startsWith("/")) return { type, path: trimmed };
  const hp = parseHostPort(trimmed);
  if (!hp) throw bad("host:port, a unix socket path, or redis://[user:password@]host:port[/db]");
  return { type, ...hp };
}

/** A short description of the store for logs and error messages. */
export function describeAddress(a: RedisAddress): string {
  const hp = (x: HostPort) => `${x.host}:${x.port}`;
  if (a.type === "sentinel") return `sentinel ${a.masterName} (${a.sentinels.map(hp).join(",")})`;
  if (a.type === "cluster") return `cluster ${a.nodes.map(hp).join(",")}`;
  return a.path ?? `${a.host}:${a.port}`;
}
