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

export function isoTime(ms: number): string {
  return new Date(ms).toISOString();
}
