/**
 * Reading the player's history list (lua/write-player.lua describes an entry): each entry is a
 * JSON header line `{"v","t","k","by","keys","lens"}` and then the stored entries the write
 * replaced, back to back. `lens` are BYTE lengths, so entries must be read as Buffers
 * (LRANGE on a string reply would split multi-byte UTF-8 at the wrong place).
 */

export interface HistoryHeader {
  /** The version this write produced; undoing it gives version v - 1. */
  readonly version: number;
  readonly timeMs: number;
  readonly kind: string;
  readonly by: string;
  readonly keys: readonly string[];
}

export interface HistoryEntry extends HistoryHeader {
  /** key -> stored entry it had before this write, or null when the key did not exist. */
  readonly previous: ReadonlyMap<string, Buffer | null>;
}

export function parseHistoryEntry(raw: Buffer): HistoryEntry {
  const nl = raw.indexOf(0x0a);
  if (nl < 0) throw new Error('history entry without a header line');
  const h = JSON.parse(raw.subarray(0, nl).toString('utf8')) as {
    v: number; t: number; k: string; by: string; keys: string[] | Record<string, never>; lens: number[] | Record<string, never>;
  };
  // cjson encodes an empty Lua table as {}, not [].
  const keys = Array.isArray(h.keys) ? h.keys : [];
  const lens = Array.isArray(h.lens) ? h.lens : [];
  if (keys.length !== lens.length) throw new Error(`history entry v${h.v}: ${keys.length} keys but ${lens.length} lengths`);
  const previous = new Map<string, Buffer | null>();
  let at = nl + 1;
  keys.forEach((key, i) => {
    const len = lens[i]!;
    if (len < 0) { previous.set(key, null); return; }
    if (at + len > raw.length) throw new Error(`history entry v${h.v}: entry of ${key} runs past the end`);
    previous.set(key, raw.subarray(at, at + len));
    at += len;
  });
  return { version: h.v, timeMs: h.t, kind: h.k, by: h.by, keys, previous };
}

/**
 * The data fields as they were at `target`, from the current fields (at `current`) and the
 * history list newest first; null when an entry between them is no longer retained.
 * Version 0 is "no data".
 */
export function rebuildAt(
  current: ReadonlyMap<string, Buffer>, currentVersion: number, entries: readonly HistoryEntry[], target: number,
): Map<string, Buffer> | null {
  if (target < 0 || target > currentVersion) return null;
  const data = new Map(current);
  let want = currentVersion;
  for (const e of entries) {
    if (want === target) break;
    if (e.version !== want) return null;
    for (const [key, prev] of e.previous) {
      if (prev === null) data.delete(key);
      else data.set(key, prev);
    }
    want -= 1;
  }
  // A player's first write keeps no entry: reaching version 1 with every later entry undone, 0 is empty.
  if (want === 1 && target === 0) return new Map();
  if (want !== target) return null;
  return data;
}
