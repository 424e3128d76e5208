// Helpers for platform-only access tests: addresses that no other test uses, the headers the
// platform's game servers send, and a bounded wait for something to reach another instance.
import { randomBytes, randomInt } from 'node:crypto';
import { normalizeIp } from '../../src/domain/address.js';

export const PLATFORM = { 'user-agent': 'Roblox/Linux', 'roblox-id': '1818' } as const;
export const EDITOR_UA = 'RobloxStudio/WinInet';
export const CURL_UA = 'curl/8.5.0';

let next4 = randomInt(0, 508);
/** A fresh documentation-range IPv4 address (198.51.100.0/24, 203.0.113.0/24). */
export function freshIPv4(): string {
  const n = next4++ % 508;
  return n < 254 ? `198.51.100.${n + 1}` : `203.0.113.${n - 253}`;
}

/** A fresh documentation-range IPv6 address under `prefix` (a /48, default 2001:db8:ee::), canonical. */
export function freshIPv6(prefix = '2001:db8:ee'): string {
  const h = randomBytes(10).toString('hex').match(/.{4}/g)!;
  return normalizeIp(`${prefix}:${h.join(':')}`)!;
}

/** Headers that make the request arrive "from" `address` through one trusted proxy. */
export function via(address: string, headers: Record<string, string> = {}): Record<string, string> {
  return { 'x-forwarded-for': address, ...headers };
}

export async function waitFor(check: () => Promise<boolean>, timeoutMs = 3000): Promise<boolean> {
  const until = Date.now() + timeoutMs;
  for (;;) {
    if (await check()) return true;
    if (Date.now() > until) return false;
    await new Promise((r) => setTimeout(r, 25));
  }
}
