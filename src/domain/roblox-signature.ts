// The platform's webhook signature (its "webhook notifications" page): the header
// `roblox-signature: t=<unix seconds>,v1=<signature>`, where the signature is the Base64
// HMAC-SHA256, keyed by the secret set in the dashboard, of `<t>.<the body as sent>`. Checked
// over the bytes received, never over a re-serialised parse: a re-encoding of the same JSON
// would not match.
import { createHmac, timingSafeEqual } from 'node:crypto';

export const SIGNATURE_HEADER = 'roblox-signature';

/** A signature header as sent; several `v1` values are allowed (the platform may sign with more than one secret). */
export interface SignatureHeader {
  readonly timestamp: number;
  readonly signatures: readonly Buffer[];
}

const ENTRY = /^\s*([a-z0-9]+)=(.*?)\s*$/;
const BASE64 = /^[A-Za-z0-9+/]+={0,2}$/;

/** The header's timestamp and signatures, or undefined when it is not `t=<digits>,v1=<base64>[,...]`. */
export function parseSignatureHeader(raw: string | undefined): SignatureHeader | undefined {
  if (raw === undefined || raw.length > 1024) return undefined;
  let timestamp: number | undefined;
  const signatures: Buffer[] = [];
  for (const part of raw.split(',')) {
    const entry = ENTRY.exec(part);
    if (!entry) return undefined;
    const [, name, value] = entry as unknown as [string, string, string];
    if (name === 't') {
      if (!/^\d{1,12}$/.test(value) || timestamp !== undefined) return undefined;
      timestamp = Number(value);
    } else if (name === 'v1') {
      if (!BASE64.test(value)) return undefined;
      signatures.push(Buffer.from(value, 'base64'));
    }
    // Other schemes (a later v2) are skipped, as the platform's own libraries do.
  }
  if (timestamp === undefined || signatures.length === 0) return undefined;
  return { timestamp, signatures };
}

/** The signature of a body at a timestamp, as the platform computes it. */
export function signBody(secret: string, timestamp: number, body: Buffer): Buffer {
  return createHmac('sha256', secret).update(`${timestamp}.`).update(body).digest();
}

/** The header the platform would send for this body: what a test or a replay tool signs with. */
export function signatureHeaderFor(secret: string, timestamp: number, body: Buffer | string): string {
  return `t=${timestamp},v1=${signBody(secret, timestamp, Buffer.from(body)).toString('base64')}`;
}

/** Whether any of the header's signatures is the body's, compared in constant time. */
export function signatureMatches(secret: string, header: SignatureHeader, body: Buffer): boolean {
  const expected = signBody(secret, header.timestamp, body);
  let matched = false;
  for (const given of header.signatures) {
    if (given.length === expected.length && timingSafeEqual(given, expected)) matched = true;
  }
  return matched;
}

export type TimestampVerdict = 'ok' | 'stale' | 'future';

/**
 * A signed timestamp older than `maxAgeSeconds` is a replay of an old delivery; one in the
 * future is forged or from a broken clock. FUTURE_SKEW_SECONDS forgives the small difference
 * between the platform's clock and ours, which would otherwise refuse a fresh delivery.
 */
export const FUTURE_SKEW_SECONDS = 60;

export function judgeTimestamp(timestamp: number, nowMs: number, maxAgeSeconds: number): TimestampVerdict {
  const now = Math.floor(nowMs / 1000);
  if (timestamp > now + FUTURE_SKEW_SECONDS) return 'future';
  if (timestamp < now - maxAgeSeconds) return 'stale';
  return 'ok';
}
