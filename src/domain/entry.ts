// How one entry of a player's data is stored in its hash field: the JSON array
// `[updated_at_ms,<value as JSON>]`. One field holds both, so a value can never be written
// without its timestamp; and the value's JSON text can be cut out and sent on unparsed.

export function encodeEntry(valueJson: string, updatedAtMs: number): string {
  return `[${updatedAtMs},${valueJson}]`;
}

export interface StoredEntry {
  readonly updatedAtMs: number;
  /** The value exactly as JSON text. */
  readonly valueJson: string;
}

/** Splits a stored entry, or returns undefined when it is not in the stored form. */
export function decodeEntry(stored: string): StoredEntry | undefined {
  const comma = stored.indexOf(',');
  if (stored.charCodeAt(0) !== 0x5b /* [ */ || comma < 2 || !stored.endsWith(']')) return undefined;
  const updatedAtMs = Number(stored.slice(1, comma));
  if (!Number.isSafeInteger(updatedAtMs)) return undefined;
  return { updatedAtMs, valueJson: stored.slice(comma + 1, -1) };
}

const DAY_MS = 86_400_000;
/** The UTC day last formatted: its start and its `YYYY-MM-DDT` prefix. */
let day = { start: -1, prefix: '' };

const pad2 = (n: number) => (n < 10 ? '0' : '') + n;
const pad3 = (n: number) => (n < 10 ? '00' : n < 100 ? '0' : '') + n;

/**
 * `new Date(ms).toISOString()`, without building a Date for each call: answers format an
 * updated_at on every read and write, and the Date showed in the CPU profile. The day's prefix
 * is cached; the time of day is integer arithmetic.
 */
export function isoTime(ms: number): string {
  if (!Number.isSafeInteger(ms) || ms < 0 || ms >= 253_402_300_800_000) return new Date(ms).toISOString();
  const start = ms - (ms % DAY_MS);
  if (start !== day.start) day = { start, prefix: new Date(start).toISOString().slice(0, 11) };
  let rest = ms - start;
  const millis = rest % 1000;
  rest = (rest - millis) / 1000;
  const seconds = rest % 60;
  rest = (rest - seconds) / 60;
  const minutes = rest % 60;
  const hours = (rest - minutes) / 60;
  return `${day.prefix}${pad2(hours)}:${pad2(minutes)}:${pad2(seconds)}.${pad3(millis)}Z`;
}
