// Which address a request comes from. By default the socket's peer. Behind the operator's own
// proxies, X-Forwarded-For is read from the right, only as far as the operator said to trust
// it (a hop count, or the proxies' ranges): every entry further left was written by the
// caller and could name anyone, so believing it would let a caller get any address banned,
// or escape its own ban. And it is read only when the socket's peer is itself one of those
// proxies: with a hop count, a loopback or private address (TRUSTED_PEER_RANGES); with ranges,
// an address inside them. A caller that reaches the port directly is judged by its own address.
import type { GateConfig } from '../config.js';
import { banSubject, CidrList, formatIp, parseIp, type Ip } from '../domain/address.js';

export type ProxyTrust =
  | { readonly kind: 'none' }
  | { readonly kind: 'hops'; readonly hops: number }
  | { readonly kind: 'cidrs'; readonly proxies: CidrList };

export type ClientAddress =
  | { readonly known: true; readonly ip: Ip; readonly text: string }
  /** The chain is shorter than the trusted hops, or the trusted entry is not an address. */
  | { readonly known: false; readonly why: string };

/**
 * Where a proxy counted by TRUST_PROXY_HOPS may be: the operator's own hosts and networks
 * (ipaddr.js range names: 127/8 and ::1, 10/8, 172.16/12, 192.168/16, fc00::/7). A hop count
 * alone says nothing of where the proxy is; a public address is never the operator's proxy
 * by default, so its header is not believed. TRUSTED_PROXY_CIDRS names public proxies.
 */
export const TRUSTED_PEER_RANGES: ReadonlySet<string> = new Set(['loopback', 'private', 'uniqueLocal']);

export function proxyTrustOf(config: Pick<GateConfig, 'trustProxyHops' | 'trustedProxyCidrs'>): ProxyTrust {
  if (config.trustedProxyCidrs.length > 0) return { kind: 'cidrs', proxies: CidrList.of(config.trustedProxyCidrs) };
  if (config.trustProxyHops > 0) return { kind: 'hops', hops: config.trustProxyHops };
  return { kind: 'none' };
}

/** Strips what some proxies add around an address: `[v6]:port`, `v4:port`, quotes. */
function bareEntry(entry: string): string {
  let text = entry.trim().replace(/^"(.*)"$/, '$1');
  const bracketed = /^\[([^\]]+)\](?::\d+)?$/.exec(text);
  if (bracketed) return bracketed[1]!;
  const v4port = /^(\d{1,3}(?:\.\d{1,3}){3}):\d+$/.exec(text);
  if (v4port) text = v4port[1]!;
  return text;
}

/** Every X-Forwarded-For entry, left (farthest) to right (nearest), over repeated headers. */
export function forwardedChain(header: string | string[] | undefined): string[] {
  if (header === undefined) return [];
  const joined = Array.isArray(header) ? header.join(',') : header;
  return joined
    .split(',')
    .map((e) => e.trim())
    .filter((e) => e !== '');
}

function known(ip: Ip): ClientAddress {
  return { known: true, ip, text: formatIp(ip) };
}

export function resolveClientAddress(
  socketAddress: string | undefined,
  forwardedFor: string | string[] | undefined,
  trust: ProxyTrust,
): ClientAddress {
  const peer = socketAddress === undefined ? undefined : parseIp(socketAddress);
  if (!peer) return { known: false, why: 'the connection has no peer address' };
  if (trust.kind === 'none') return known(peer);

  if (trust.kind === 'hops' && !TRUSTED_PEER_RANGES.has(peer.range())) return known(peer);
  const chain = forwardedChain(forwardedFor);
  if (trust.kind === 'hops') {
    // The socket peer is the nearest proxy; each trusted proxy appended the address it saw.
    if (chain.length < trust.hops) {
      return { known: false, why: `X-Forwarded-For has ${chain.length} entries, fewer than TRUST_PROXY_HOPS=${trust.hops}` };
    }
    const entry = chain[chain.length - trust.hops]!;
    const ip = parseIp(bareEntry(entry));
    return ip ? known(ip) : { known: false, why: 'the trusted X-Forwarded-For entry is not an IP address' };
  }

  // Ranges: walk left while the address at hand is one of the operator's proxies.
  let current = peer;
  for (let i = chain.length - 1; i >= 0 && trust.proxies.contains(current); i--) {
    const ip = parseIp(bareEntry(chain[i]!));
    if (!ip) return { known: false, why: 'an X-Forwarded-For entry written by a trusted proxy is not an IP address' };
    current = ip;
  }
  return known(current);
}

/**
 * One name per caller, for budgets kept per address: the address (an IPv6 address's /64, as
 * bans use), or `unknown` for every caller whose address cannot be told.
 */
export function callerKey(address: ClientAddress): string {
  return address.known ? banSubject(address.ip) : 'unknown';
}
