// A tiny DNS server on node:dgram that answers SRV queries from a table the test
// can change, so the OBJCACHE_SRV path runs through a real resolver
// (dns.Resolver pointed at it) without touching the machine's DNS.

import dgram from "node:dgram";

export interface SrvAnswer {
  priority?: number;
  weight?: number;
  port: number;
  target: string;
}

function encodeName(name: string): Buffer {
  const parts = name.replace(/\.$/, "").split(".").filter(Boolean);
  const bufs = parts.map((p) => Buffer.concat([Buffer.from([p.length]), Buffer.from(p)]));
  return Buffer.concat([...bufs, Buffer.from([0])]);
}

export class SrvDnsServer {
  readonly records = new Map<string, SrvAnswer[]>();
  queries = 0;
  private constructor(
    private readonly socket: dgram.Socket,
    readonly port: number,
  ) {}

  static async start(): Promise<SrvDnsServer> {
    const socket = dgram.createSocket("udp4");
    await new Promise<void>((resolve) => socket.bind(0, "127.0.0.1", resolve));
    const server = new SrvDnsServer(socket, socket.address().port);
    socket.on("message", (msg, rinfo) => {
      const reply = server.answer(msg);
      if (reply) socket.send(reply, rinfo.port, rinfo.address);
    });
    return server;
  }

  get address(): string {
    return `127.0.0.1:${this.port}`;
  }

  private answer(query: Buffer): Buffer | undefined {
    if (query.length < 12) return undefined;
    this.queries++;
    // Question: labels up to a zero byte, then type and class.
    let off = 12;
    const labels: string[] = [];
    while (off < query.length && query[off] !== 0) {
      const len = query[off]!;
      labels.push(query.toString("latin1", off + 1, off + 1 + len));
      off += 1 + len;
    }
    const qEnd = off + 5;
    const qtype = query.readUInt16BE(off + 1);
    const name = labels.join(".").toLowerCase();
    const answers = qtype === 33 ? (this.records.get(name) ?? []) : [];
    const header = Buffer.alloc(12);
    query.copy(header, 0, 0, 2); // id
    header.writeUInt16BE(0x8180 | (answers.length || this.records.has(name) ? 0 : 3), 2); // response, RD, RA; NXDOMAIN when unknown
    header.writeUInt16BE(1, 4);
    header.writeUInt16BE(answers.length, 6);
    const rrs = answers.map((a) => {
      const target = encodeName(a.target);
      const rdata = Buffer.alloc(6);
      rdata.writeUInt16BE(a.priority ?? 10, 0);
      rdata.writeUInt16BE(a.weight ?? 10, 2);
      rdata.writeUInt16BE(a.port, 4);
      const fixed = Buffer.alloc(12);
      fixed.writeUInt16BE(0xc00c, 0); // the question's name
      fixed.writeUInt16BE(33, 2);
      fixed.writeUInt16BE(1, 4);
      fixed.writeUInt32BE(1, 6); // ttl
      fixed.writeUInt16BE(6 + target.length, 10);
      return Buffer.concat([fixed, rdata, target]);
    });
    return Buffer.concat([header, query.subarray(12, qEnd), ...rrs]);
  }

  stop(): Promise<void> {
    return new Promise((resolve) => this.socket.close(() => resolve()));
  }
}
