import { lookup as dnsLookup, type LookupAddress } from "node:dns";
import { BlockList, isIP, type LookupFunction } from "node:net";

// Which addresses a webhook may be sent to. Checked on the address a name
// resolved to (so DNS cannot point a name at the metadata service) and on every
// redirect hop, for real deliveries and test deliveries alike.

export interface EgressOptions {
  /** Deny private, loopback and shared ranges (production); allowed by default for local receivers. */
  denyPrivate: boolean;
  /** CIDRs a send may go to; when given, nothing else is allowed (always-denied ranges stay denied). */
  allow: string[];
  /** CIDRs a send never goes to. */
  deny: string[];
}

type Family = "ipv4" | "ipv6";

/** Ranges no webhook may reach, whatever the flags say. */
const ALWAYS_DENIED: [label: string, cidrs: string[]][] = [
  ["unspecified", ["0.0.0.0/8", "::/128"]],
  ["link-local (cloud metadata services live here)", ["169.254.0.0/16", "fe80::/10"]],
  ["a cloud metadata address", ["100.100.100.200/32", "fd00:ec2::254/128"]],
  ["multicast", ["224.0.0.0/4", "ff00::/8"]],
  ["reserved", ["240.0.0.0/4"]],
];

/** Ranges denied unless --egress-allow-private. */
const PRIVATE: [label: string, cidrs: string[]][] = [
  ["loopback", ["127.0.0.0/8", "::1/128"]],
  ["private", ["10.0.0.0/8", "172.16.0.0/12", "192.168.0.0/16", "fc00::/7"]],
  ["shared address space (carrier NAT)", ["100.64.0.0/10"]],
];

/** `a.b.c.d/n` or `v6::/n` (a bare address is its own /32 or /128), or an error naming what is wrong. */
export function parseCidr(text: string): { address: string; prefix: number; family: Family } {
  const [address = "", prefixText, extra] = text.trim().split("/");
  const version = isIP(address);
  if (!version || extra !== undefined)
    throw new Error(`"${text}" is not an address range like 10.0.0.0/8 or fd00::/8`);
  const max = version === 4 ? 32 : 128;
  const prefix = prefixText === undefined ? max : Number(prefixText);
  if (!/^\d+$/.test(prefixText ?? String(max)) || prefix > max)
    throw new Error(`"${text}": the prefix length must be 0-${max}`);
  return { address, prefix, family: version === 4 ? "ipv4" : "ipv6" };
}

function blockList(cidrs: string[]): BlockList {
  const list = new BlockList();
  for (const c of cidrs) {
    const { address, prefix, family } = parseCidr(c);
    list.addSubnet(address, prefix, family);
  }
  return list;
}

/** The IPv4 address inside an IPv4-mapped (::ffff:a.b.c.d) or NAT64 (64:ff9b::/96) IPv6 address. */
function embeddedIpv4(address: string): string | undefined {
  const m = /^(?:::ffff:|64:ff9b::)(?:(\d+\.\d+\.\d+\.\d+)|([0-9a-f]{1,4}):([0-9a-f]{1,4}))$/i.exec(address);
  if (!m) return undefined;
  if (m[1]) return m[1];
  const hi = Number.parseInt(m[2]!, 16);
  const lo = Number.parseInt(m[3]!, 16);
  return [hi >> 8, hi & 255, lo >> 8, lo & 255].join(".");
}

export class EgressDenied extends Error {
  readonly code = "EGRESS_DENIED";
}

export class EgressPolicy {
  private readonly always = ALWAYS_DENIED.map(([label, cidrs]) => [label, blockList(cidrs)] as const);
  private readonly private = PRIVATE.map(([label, cidrs]) => [label, blockList(cidrs)] as const);
  private readonly allow: [string, BlockList][];
  private readonly deny: [string, BlockList][];

  constructor(readonly options: EgressOptions) {
    this.allow = options.allow.map((c) => [c, blockList([c])]);
    this.deny = options.deny.map((c) => [c, blockList([c])]);
  }

  /** Why a send to this IP address is denied, or undefined when it may go. */
  reason(ip: string): string | undefined {
    const mapped = embeddedIpv4(ip);
    if (mapped) return this.reason(mapped);
    const family: Family = isIP(ip) === 4 ? "ipv4" : "ipv6";
    const hit = (lists: (readonly [string, BlockList])[]) => lists.find(([, l]) => l.check(ip, family))?.[0];
    const always = hit(this.always);
    if (always) return `${ip} is ${always} (always denied)`;
    const denied = hit(this.deny);
    if (denied) return `${ip} is in --egress-deny ${denied}`;
    if (this.allow.length) return hit(this.allow) ? undefined : `${ip} is not in --egress-allow`;
    const priv = this.options.denyPrivate ? hit(this.private) : undefined;
    if (priv) return `${ip} is ${priv} (private ranges are denied unless --egress-allow-private)`;
    return undefined;
  }

  /** Why a URL's host is denied when it is an address literal (names are checked once resolved). */
  literalReason(url: URL): string | undefined {
    const host = url.hostname.replace(/^\[|\]$/g, "");
    return isIP(host) ? this.reason(host) : undefined;
  }

  /**
   * A DNS lookup for sockets that only hands out allowed addresses; a name whose
   * every address is denied fails the connection with EgressDenied.
   */
  readonly lookup: LookupFunction = (hostname, options, callback) => {
    dnsLookup(hostname, { ...options, all: true }, (err, addresses: LookupAddress[]) => {
      if (err) return callback(err, "", 0);
      const allowed = addresses.filter((a) => !this.reason(a.address));
      if (allowed.length === 0) {
        const why = addresses.map((a) => this.reason(a.address)).join("; ");
        return callback(
          new EgressDenied(`egress policy: ${hostname} resolves only to denied addresses: ${why}`),
          "",
          0,
        );
      }
      if (options.all) return (callback as unknown as (e: null, a: LookupAddress[]) => void)(null, allowed);
      callback(null, allowed[0]!.address, allowed[0]!.family);
    });
  };
}
