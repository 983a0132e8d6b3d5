// Pushes statistics to a statsd-compatible daemon over UDP every STATS_FLUSH_INTERVAL:
// counters as `name:delta|c` (only those that changed), gauges as `name:value|g`, timer
// samples as `name:ms|ms`. Lines are packed into datagrams of at most 1432 bytes, which
// fit a 1500-byte Ethernet MTU with IPv4/IPv6 and UDP headers, so nothing is fragmented.

import dgram from "node:dgram";
import { lookup } from "node:dns/promises";
import type { Logger } from "../../common/logger.js";
import type { StatsStore } from "./store.js";
import { cleanTag, type Mogrifier, mogrify, nameWithTags } from "./tags.js";

export const MAX_DATAGRAM_BYTES = 1432;
/** Timer samples kept per timer and interval; beyond it a uniform sample is sent with `|@rate`. */
const MAX_SAMPLES = 1000;

export interface StatsdOptions {
  host: string;
  port: number;
  flushIntervalMs: number;
  extraTags: Readonly<Record<string, string>>;
  /** DogStatsD `|#k:v` tags (and mogrifiers) instead of tags inside the name. */
  tagged: boolean;
  mogrifiers: readonly Mogrifier[];
}

interface Samples {
  values: number[];
  seen: number;
}

/** Packs lines (without line ends) into payloads of at most `max` bytes; a longer line goes alone. */
export function packLines(lines: readonly string[], max = MAX_DATAGRAM_BYTES): Buffer[] {
  const out: Buffer[] = [];
  let current = "";
  let size = 0;
  for (const line of lines) {
    const n = Buffer.byteLength(line);
    if (size > 0 && size + 1 + n > max) {
      out.push(Buffer.from(current));
      current = "";
      size = 0;
    }
    current = size > 0 ? `${current}\n${line}` : line;
    size += size > 0 ? n + 1 : n;
  }
  if (size > 0) out.push(Buffer.from(current));
  return out;
}

export class StatsdSink {
  private readonly lastCounters = new Map<string, number>();
  private readonly samples = new Map<string, Samples>();
  private readonly names = new Map<string, { name: string; suffix: string }>();
  private readonly sortedTags: string[];
  private socket: dgram.Socket | undefined;
  private socketFamily = 0;
  private timer: NodeJS.Timeout | undefined;
  private failing = false;

  constructor(
    private readonly stats: StatsStore,
    private readonly opts: StatsdOptions,
    private readonly logger: Logger,
  ) {
    this.sortedTags = Object.keys(opts.extraTags)
      .sort()
      .map((k) => `${cleanTag(k)}:${cleanTag(opts.extraTags[k]!)}`);
    stats.onTiming((name, ms) => this.sample(name, ms));
  }

  start(): void {
    this.timer = setInterval(() => void this.flush(), this.opts.flushIntervalMs);
    this.timer.unref();
    this.logger.info(
      { address: `${this.opts.host}:${this.opts.port}`, tagged: this.opts.tagged },
      "pushing statistics to statsd over UDP",
    );
  }

  private sample(name: string, ms: number): void {
    let s = this.samples.get(name);
    if (!s) {
      s = { values: [], seen: 0 };
      this.samples.set(name, s);
    }
    s.seen++;
    if (s.values.length < MAX_SAMPLES) s.values.push(ms);
    else {
      // Reservoir sampling: every sample of the interval has the same chance to be sent.
      const i = Math.floor(Math.random() * s.seen);
      if (i < MAX_SAMPLES) s.values[i] = ms;
    }
  }

  /** The name as sent and what follows the type (tags), cached per statistic. */
  private line(stat: string, value: number, type: string, rate = ""): string {
    let n = this.names.get(stat);
    if (!n) {
      if (this.opts.tagged) {
        const m = mogrify(stat, this.opts.mogrifiers);
        const tags = [...this.sortedTags, ...m.tags.map((t) => cleanTagPair(t))];
        n = { name: cleanName(m.name), suffix: tags.length ? `|#${tags.join(",")}` : "" };
      } else n = { name: cleanName(nameWithTags(stat, this.opts.extraTags)), suffix: "" };
      if (this.names.size > 100_000) this.names.clear();
      this.names.set(stat, n);
    }
    return `${n.name}:${value}|${type}${rate}${n.suffix}`;
  }

  /** The lines of one flush: changed counters, every gauge, the timer samples since the last flush. */
  collect(): string[] {
    const lines: string[] = [];
    for (const [name, total] of this.stats.counterEntries()) {
      const delta = total - (this.lastCounters.get(name) ?? 0);
      if (delta === 0) continue;
      this.lastCounters.set(name, total);
      lines.push(this.line(name, delta, "c"));
    }
    for (const [name, value] of this.stats.gaugeEntries()) lines.push(this.line(name, value, "g"));
    for (const [name, s] of this.samples) {
      const rate = s.seen > s.values.length ? `|@${(s.values.length / s.seen).toPrecision(6)}` : "";
      for (const v of s.values) lines.push(this.line(name, Number(v.toFixed(3)), "ms", rate));
    }
    this.samples.clear();
    return lines;
  }

  async flush(): Promise<void> {
    const lines = this.collect();
    if (lines.length === 0) return;
    try {
      const socket = await this.open();
      for (const packet of packLines(lines)) {
        await new Promise<void>((resolve, reject) =>
          socket.send(packet, this.opts.port, this.address, (err) => (err ? reject(err) : resolve())),
        );
      }
      if (this.failing) this.logger.info("statsd push works again");
      this.failing = false;
    } catch (err) {
      // UDP loses data by design; say so once per outage instead of at every flush.
      if (!this.failing)
        this.logger.warn(
          { err: (err as Error).message, address: `${this.opts.host}:${this.opts.port}` },
          "cannot push statistics to statsd",
        );
      this.failing = true;
    }
  }

  private address = "";

  /** Resolves the host at each flush (it may move) and keeps a socket of the matching family. */
  private async open(): Promise<dgram.Socket> {
    const { address, family } = await lookup(this.opts.host);
    this.address = address;
    if (!this.socket || this.socketFamily !== family) {
      this.socket?.close();
      this.socket = dgram.createSocket(family === 6 ? "udp6" : "udp4");
      this.socket.on("error", () => {});
      this.socket.unref();
      this.socketFamily = family;
    }
    return this.socket;
  }

  /** Stops the timer and sends what is left. */
  async close(): Promise<void> {
    clearInterval(this.timer);
    await this.flush();
    this.socket?.close();
    this.socket = undefined;
  }
}

function cleanName(name: string): string {
  return name.replace(/[:|@#\r\n]/g, "_");
}

function cleanTagPair(tag: string): string {
  const i = tag.indexOf(":");
  return `${cleanTag(tag.slice(0, i))}:${cleanTag(tag.slice(i + 1))}`;
}
