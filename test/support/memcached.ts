// tags: @needs-services (starts memcached servers of its own)
// Private memcached servers for tests and benchmarks (Debian's /usr/bin/memcached)
// on free loopback ports, plus a tiny text-protocol probe to read keys and stats.
// `stop()` kills the processes; call it in `after`, also when a test failed.

import { type ChildProcess, spawn } from "node:child_process";
import net from "node:net";
import { freePort } from "./ports.js";

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Sends one text-protocol command and returns the reply up to `END\r\n` or the first line. */
export function memcachedCommand(port: number, command: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = net.connect({ host: "127.0.0.1", port });
    let out = "";
    const timer = setTimeout(() => {
      socket.destroy();
      reject(new Error(`memcached on ${port}: no reply to ${command}`));
    }, 3000);
    socket.on("error", (err) => {
      clearTimeout(timer);
      reject(err);
    });
    socket.on("data", (d) => {
      out += d;
      const multi = /^(get|stats)/.test(command);
      if (multi ? out.endsWith("END\r\n") : out.endsWith("\r\n")) {
        clearTimeout(timer);
        socket.destroy();
        resolve(out);
      }
    });
    socket.write(`${command}\r\n`);
  });
}

export class MemcachedServer {
  child: ChildProcess | undefined;
  output = "";

  constructor(
    readonly port: number,
    readonly extraArgs: string[] = [],
  ) {}

  static async start(extraArgs: string[] = []): Promise<MemcachedServer> {
    const s = new MemcachedServer(await freePort(), extraArgs);
    await s.start();
    return s;
  }

  get address(): string {
    return `127.0.0.1:${this.port}`;
  }

  async start(): Promise<void> {
    // -u root: memcached refuses to run as root without naming the user.
    const args = [
      "-p",
      String(this.port),
      "-l",
      "127.0.0.1",
      "-U",
      "0",
      "-m",
      "32",
      "-t",
      "1",
      "-u",
      "root",
      ...this.extraArgs,
    ];
    this.child = spawn("memcached", args, { stdio: ["ignore", "pipe", "pipe"] });
    this.child.stdout?.on("data", (d) => {
      this.output += d;
    });
    this.child.stderr?.on("data", (d) => {
      this.output += d;
    });
    const deadline = Date.now() + 10_000;
    while (Date.now() < deadline) {
      if (this.child.exitCode !== null) throw new Error(`memcached exited: ${this.output}`);
      const up = await new Promise<boolean>((resolve) => {
        const c = net.connect({ host: "127.0.0.1", port: this.port }, () => {
          c.destroy();
          resolve(true);
        });
        c.on("error", () => resolve(false));
      });
      if (up) return;
      await sleep(25);
    }
    throw new Error(`memcached on ${this.port} did not start: ${this.output}`);
  }

  /** The value of `key`, or undefined. Only for servers without TLS. */
  async get(key: string): Promise<string | undefined> {
    const reply = await memcachedCommand(this.port, `get ${key}`);
    const m = /^VALUE \S+ \d+ \d+\r\n(.*)\r\n/.exec(reply);
    return m?.[1];
  }

  async stats(): Promise<Record<string, number>> {
    const reply = await memcachedCommand(this.port, "stats");
    const out: Record<string, number> = {};
    for (const m of reply.matchAll(/^STAT (\S+) (\S+)\r$/gm)) out[m[1]!] = Number(m[2]);
    return out;
  }

  kill(): Promise<void> {
    const child = this.child;
    if (!child || child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
    return new Promise((resolve) => {
      child.once("exit", () => resolve());
      child.kill("SIGKILL");
    });
  }
}

/** Starts `n` servers; if one fails, the others are stopped. */
export async function startMemcached(n: number, extraArgs: string[] = []): Promise<MemcachedServer[]> {
  const servers: MemcachedServer[] = [];
  try {
    for (let i = 0; i < n; i++) servers.push(await MemcachedServer.start(extraArgs));
    return servers;
  } catch (err) {
    await Promise.all(servers.map((s) => s.kill()));
    throw err;
  }
}
