// What an API key looks like, how it is made and how it is hashed. The raw key exists only in
// the response that creates it; everything else sees its SHA-256 or its id.
import { hash } from 'node:crypto';
import type { IncomingHttpHeaders } from 'node:http';
import { customAlphabet } from 'nanoid';

const BASE62 = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';

export const API_KEY_PREFIX = 'pds_';
const API_KEY_RANDOM_LENGTH = 40; // 40 base62 characters: about 238 bits.
/** How many characters of a key (prefix included) may be shown to identify it. */
export const VISIBLE_PREFIX_LENGTH = API_KEY_PREFIX.length + 6;

const randomKey = customAlphabet(BASE62, API_KEY_RANDOM_LENGTH);
const randomId = customAlphabet(BASE62, 16);

/** Keys we issue: `pds_` and 40 base62 characters. Older or longer keys still validate. */
const API_KEY_SHAPE = /^pds_[0-9A-Za-z]{32,128}$/;

export function generateApiKey(): string {
  return API_KEY_PREFIX + randomKey();
}

export function generateKeyId(): string {
  return `key_${randomId()}`;
}

export function generateWorkspaceId(): string {
  return `ws_${randomId()}`;
}

/** Cheap shape check, so obviously wrong keys never reach Redis. */
export function looksLikeApiKey(raw: string): boolean {
  return API_KEY_SHAPE.test(raw);
}

const API_KEY_ANYWHERE = /pds_[0-9A-Za-z]{32,128}/g;
const API_KEY_INSIDE = /pds_[0-9A-Za-z]{32}/;

/** Whether anything in `text` has the shape of an API key (a key may be cut anywhere past 32 characters). */
export function holdsApiKey(text: string): boolean {
  return API_KEY_INSIDE.test(text);
}
const PERCENT_BYTE = /%([0-9A-Fa-f]{2})/g;
/** Rounds of percent-decoding tried on a segment: a key encoded twice (`%254D`) is found too. */
const DECODE_ROUNDS = 3;

function redactPlain(text: string): string {
  return text.replace(API_KEY_ANYWHERE, (key) => `${visiblePrefix(key)}...[redacted]`);
}

/** Percent-decoding that never throws (a lone `%` stays as it is); keys are ASCII, so byte-wise is enough. */
function decodeLoosely(text: string): string {
  return text.replace(PERCENT_BYTE, (_, hex: string) => String.fromCharCode(parseInt(hex, 16)));
}

/**
 * Text with anything shaped like an API key cut to its visible prefix: for paths that end up in
 * logs or messages. A path segment that holds a key only once percent-decoded (`/pds_%4D...`,
 * or encoded twice) is replaced by its decoded, redacted form: the path is logged as received
 * otherwise, and a caller's encoding must not let a key through.
 */
export function redactApiKeys(text: string): string {
  const plain = redactPlain(text);
  if (!plain.includes('%')) return plain;
  return plain
    .split('/')
    .map((segment) => {
      let decoded = segment;
      for (let round = 0; round < DECODE_ROUNDS && decoded.includes('%'); round++) decoded = decodeLoosely(decoded);
      const redacted = redactPlain(decoded);
      return redacted === decoded ? segment : redacted;
    })
    .join('/');
}

/** One-shot crypto.hash: about half the cost of createHash().update().digest() on every request. */
export function hashApiKey(raw: string): string {
  return hash('sha256', raw, 'hex');
}

export function visiblePrefix(raw: string): string {
  return raw.slice(0, VISIBLE_PREFIX_LENGTH);
}

/**
 * The API key a request carries: its `x-api-key` header when that is one non-empty value.
 * Node joins a repeated header into one string, which is then no valid key. The one reader of
 * the header, for the authentication, the recheck after the body and the gate's editor path.
 */
export function apiKeyOf(headers: IncomingHttpHeaders): string | undefined {
  const header = headers['x-api-key'];
  return typeof header === 'string' && header !== '' ? header : undefined;
}
