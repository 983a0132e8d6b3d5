// One connection to a memcached server speaking the text protocol, used by one
// caller at a time: a batch of commands goes out in one write and their replies
// are read in order. Only what the counters need: `get` with many keys, `incr`
// and `add`. Written here rather than taken from npm: the maintained clients
// either speak the binary protocol (memjs; memcached deprecated it), or are
// unmaintained, pick nodes themselves and lack TLS (memcached); the service needs
// text-protocol incr/add/multi-get, its own order-independent node choice, TLS and
// a per-node idle limit, which is about 200 lines on node:net.

import net from "node:net";
import tls from "node:tls";

/** A reply: a line (`STORED`, `NOT_FOUND`, a number, ...) or the values of a `get`. */
export type Reply = string | Map<string, string>;

type Expect = "line" | "values";

/** An ERROR / CLIENT_ERROR / SERVER_ERROR reply, or a broken connection. */
export class MemcacheError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "MemcacheError";
  }
}

export interface ConnectOptions {
  host: string;
  port: number;
  timeoutMs: number;
  tls?: tls.ConnectionOptions;
}

export class MemcacheConnection {
  private buf: Buffer = Buffer.alloc(0);
  private pending:
    | {
        expect: Expect[];
        replies: Reply[];
        values: Map<string, string> | undefined;
        resolve: (r: Reply[]) => void;
        reject: (e: Error) => void;
        timer: NodeJS.Timeout;
      }
    | undefined;
  alive = true;

  private constructor(private readonly socket: net.Socket) {
    socket.setNoDelay(true);
    socket.on("data", (d: Buffer) => {
      this.buf = this.buf.length ? Buffer.concat([this.buf, d]) : d;
      this.parse();
    });
    const fail = (err: Error) => {
      this.alive = false;
      this.finish(new MemcacheError(err.message));
    };
    socket.on("error", fail);
    socket.on("close", () => fail(new Error("connection closed")));
  }

  static open(o: ConnectOptions): Promise<MemcacheConnection> {
    return new Promise((resolve, reject) => {
      const socket = o.tls
        ? tls.connect({
            host: o.host,
            port: o.port,
            servername: net.isIP(o.host) ? undefined : o.host,
            ...o.tls,
          })
        : net.connect({ host: o.host, port: o.port });
      const timer = setTimeout(() => {
        socket.destroy();
        reject(new MemcacheError(`connect timeout after ${o.timeoutMs}ms`));
      }, o.timeoutMs);
      const onError = (err: Error) => {
        clearTimeout(timer);
        reject(new MemcacheError(err.message));
      };
      socket.once("error", onError);
      socket.once(o.tls ? "secureConnect" : "connect", () => {
        clearTimeout(timer);
        socket.off("error", onError);
        resolve(new MemcacheConnection(socket));
      });
    });
  }

  /** Writes `payload` (the commands, each ending in \r\n) and reads one reply per entry of `expect`. */
  send(payload: string, expect: Expect[], timeoutMs: number): Promise<Reply[]> {
    if (!this.alive) return Promise.reject(new MemcacheError("connection closed"));
    if (this.pending) return Promise.reject(new MemcacheError("connection busy"));
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        this.alive = false;
        this.finish(new MemcacheError(`no reply within ${timeoutMs}ms`));
        this.socket.destroy();
      }, timeoutMs);
      this.pending = { expect, replies: [], values: undefined, resolve, reject, timer };
      this.socket.write(payload);
    });
  }

  private finish(err?: Error): void {
    const p = this.pending;
    if (!p) return;
    this.pending = undefined;
    clearTimeout(p.timer);
    if (err) p.reject(err);
    else p.resolve(p.replies);
  }

  private parse(): void {
    let off = 0;
    const p = this.pending;
    while (p && p.replies.length < p.expect.length) {
      const eol = this.buf.indexOf("\r\n", off);
      if (eol < 0) break;
      const line = this.buf.toString("utf8", off, eol);
      if (/^(ERROR|CLIENT_ERROR|SERVER_ERROR)/.test(line)) {
        // The server may have lost track of the rest of the batch: do not reuse the connection.
        this.alive = false;
        this.buf = Buffer.alloc(0);
        this.finish(new MemcacheError(`server replied ${line}`));
        this.socket.destroy();
        return;
      }
      if (p.expect[p.replies.length] === "line") {
        p.replies.push(line);
        off = eol + 2;
        continue;
      }
      if (line === "END") {
        p.replies.push(p.values ?? new Map());
        p.values = undefined;
        off = eol + 2;
        continue;
      }
      // VALUE <key> <flags> <bytes>
      const parts = line.split(" ");
      const bytes = Number(parts[3]);
      if (parts[0] !== "VALUE" || !Number.isInteger(bytes)) {
        this.alive = false;
        this.finish(new MemcacheError(`unexpected reply ${JSON.stringify(line.slice(0, 80))}`));
        this.socket.destroy();
        return;
      }
      const end = eol + 2 + bytes;
      if (this.buf.length < end + 2) break;
      p.values ??= new Map();
      p.values.set(parts[1]!, this.buf.toString("latin1", eol + 2, end));
      off = end + 2;
    }
    this.buf = off >= this.buf.length ? Buffer.alloc(0) : this.buf.subarray(off);
    if (p && p.replies.length === p.expect.length) this.finish();
  }

  close(): void {
    this.alive = false;
    this.socket.end();
    this.socket.destroy();
  }
}
