// IP addresses and ranges as the gate sees them: one canonical text form per address (IPv4
// dotted quad; IPv6 in RFC 5952 form; IPv4-mapped IPv6 folded to IPv4), so that a ban, an
// allow-list entry and a request's address compare equal however each was written.
// Parsing is strict: "127.1" or "0x7f.0.0.1" are not addresses here, because a lenient parser
// would let two spellings of one address escape each other's bans.
import ipaddr from 'ipaddr.js';

export type Ip = ipaddr.IPv4 | ipaddr.IPv6;

/** A parsed range: the network address and its prefix length. */
export interface Cidr {
  readonly network: Ip;
  readonly bits: number;
  /** Canonical text, `network/bits`. */
  readonly text: string;
}

function fold(ip: Ip): Ip {
  return ip.kind() === 'ipv6' && (ip as ipaddr.IPv6).isIPv4MappedAddress() ? (ip as ipaddr.IPv6).toIPv4Address() : ip;
}

export function formatIp(ip: Ip): string {
  return ip.kind() === 'ipv4' ? ip.toString() : (ip as ipaddr.IPv6).toRFC5952String();
}

/** Dotted quad, decimal, no leading zeros (which some parsers read as octal). */
const DOTTED_QUAD = /^(0|[1-9]\d{0,2})\.(0|[1-9]\d{0,2})\.(0|[1-9]\d{0,2})\.(0|[1-9]\d{0,2})$/;

/** Parses one address strictly; undefined when it is not an IPv4 or IPv6 address. */
export function parseIp(raw: string): Ip | undefined {
  let text = raw.trim();
  const zone = text.indexOf('%');
  if (zone >= 0) text = text.slice(0, zone);
  // The per-request path: ipaddr.js's own strict IPv4 check costs several microseconds.
  const quad = DOTTED_QUAD.exec(text);
  if (quad) {
    const octets = [Number(quad[1]), Number(quad[2]), Number(quad[3]), Number(quad[4])];
    return octets.every((o) => o <= 255) ? new ipaddr.IPv4(octets) : undefined;
  }
  if (text.includes(':') && ipaddr.IPv6.isValid(text)) return fold(ipaddr.IPv6.parse(text));
  return undefined;
}

/** The canonical text of an address, or undefined when `raw` is not one. */
export function normalizeIp(raw: string): string | undefined {
  const ip = parseIp(raw);
  return ip ? formatIp(ip) : undefined;
}

/**
 * Parses `a.b.c.d/n`, `x:y::/n`, or a single address (a /32 or /128). Host bits are
 * cleared, so `10.1.2.3/8` reads as `10.0.0.0/8`. An IPv4-mapped IPv6 range is folded to IPv4.
 */
export function parseCidr(raw: string): Cidr | undefined {
  const text = raw.trim();
  const slash = text.indexOf('/');
  const addressPart = slash < 0 ? text : text.slice(0, slash);
  const ip = parseIp(addressPart);
  if (!ip || addressPart.includes('%')) return undefined;
  const max = ip.kind() === 'ipv4' ? 32 : 128;
  let bits = max;
  if (slash >= 0) {
    const bitsPart = text.slice(slash + 1);
    if (!/^\d{1,3}$/.test(bitsPart)) return undefined;
    bits = Number(bitsPart);
    const rawIp = ipaddr.parse(addressPart);
    // A mapped IPv6 prefix counts the 96 bits in front of the IPv4 part.
    if (rawIp.kind() === 'ipv6' && ip.kind() === 'ipv4') {
      if (bits < 96 || bits > 128) return undefined;
      bits -= 96;
    }
    if (bits > max) return undefined;
  }
  const network = networkOf(ip, bits);
  return { network, bits, text: `${formatIp(network)}/${bits}` };
}

function networkOf(ip: Ip, bits: number): Ip {
  const bytes = ip.toByteArray();
  for (let i = 0; i < bytes.length; i++) {
    const keep = Math.max(0, Math.min(8, bits - i * 8));
    bytes[i] = bytes[i]! & ((0xff << (8 - keep)) & 0xff);
  }
  return ipaddr.fromByteArray(bytes);
}

/** An ordered set of ranges; `contains` compares only ranges of the address's own family. */
export class CidrList {
  readonly ranges: readonly Cidr[];

  constructor(ranges: Iterable<Cidr>) {
    this.ranges = [...ranges];
  }

  /** Parses entries that are known to be valid (config and stored entries were checked). */
  static of(entries: Iterable<string>): CidrList {
    const ranges: Cidr[] = [];
    for (const entry of entries) {
      const cidr = parseCidr(entry);
      if (cidr) ranges.push(cidr);
    }
    return new CidrList(ranges);
  }

  get size(): number {
    return this.ranges.length;
  }

  contains(ip: Ip): boolean {
    const kind = ip.kind();
    for (const range of this.ranges) {
      if (range.network.kind() === kind && ip.match(range.network, range.bits)) return true;
    }
    return false;
  }
}

/** Splits a comma-separated list; returns the canonical entries, or the first bad entry. */
export function parseCidrList(raw: string): { ok: true; cidrs: string[] } | { ok: false; bad: string } {
  const cidrs: string[] = [];
  for (const part of raw.split(',')) {
    const entry = part.trim();
    if (entry === '') continue;
    const cidr = parseCidr(entry);
    if (!cidr) return { ok: false, bad: entry };
    if (!cidrs.includes(cidr.text)) cidrs.push(cidr.text);
  }
  return { ok: true, cidrs };
}

/**
 * What a ban covers for an address: an IPv4 address itself; for IPv6, its /64, written
 * `network/64`. A single IPv6 host is normally given a whole /64 (RFC 6177), so banning one
 * address of it would let the caller rotate through 2^64 others: one record per /64 closes that.
 */
export const IPV6_BAN_PREFIX = 64;

export function banSubject(ip: Ip): string {
  if (ip.kind() === 'ipv4') return formatIp(ip);
  return `${formatIp(networkOf(ip, IPV6_BAN_PREFIX))}/${IPV6_BAN_PREFIX}`;
}

/**
 * The network an address's automatic bans are shared within (gate/gate.ts): an IPv4 address's
 * /24, an IPv6 address's /48 (a site's usual allocation, RFC 6177), written `network/bits`.
 */
export const IPV4_NETWORK_PREFIX = 24;
export const IPV6_NETWORK_PREFIX = 48;

export function banNetwork(ip: Ip): string {
  const bits = ip.kind() === 'ipv4' ? IPV4_NETWORK_PREFIX : IPV6_NETWORK_PREFIX;
  return `${formatIp(networkOf(ip, bits))}/${bits}`;
}

/**
 * An operator's ban target: an address (an IPv6 one stands for its /64) or an IPv6 `/64`
 * range as listed. Undefined when it is neither.
 */
export function parseBanSubject(raw: string): string | undefined {
  const text = raw.trim();
  if (text.includes('/')) {
    const cidr = parseCidr(text);
    return cidr && cidr.network.kind() === 'ipv6' && cidr.bits === IPV6_BAN_PREFIX ? cidr.text : undefined;
  }
  const ip = parseIp(text);
  return ip ? banSubject(ip) : undefined;
}

/** The first address a ban subject covers (its network for a /64). */
export function subjectAddress(subject: string): Ip | undefined {
  const slash = subject.indexOf('/');
  return parseIp(slash < 0 ? subject : subject.slice(0, slash));
}
