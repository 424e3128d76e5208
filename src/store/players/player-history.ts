/**
 * Reading a player's restore points (lua/includes/restore-points.lua describes them): each list
 * element is a JSON header line `{"i","v","t","k","by","keys","lens"}` and then the stored
 * entries it recorded, back to back. `lens` are BYTE lengths, so elements must be read as
 * Buffers (LRANGE on a string reply would split multi-byte UTF-8 at the wrong place).
 *
 * Elements written before restore points existed (`{"v","t","k","by","keys","lens"}`, one per
 * write, v the version the write made) are read as points of their own: the state before that
 * write, version v - 1, taken at t. So a player's older history stays readable.
 */

export interface HistoryElement {
  /** The point's id: its interval's start (ms), or an older element's time. */
  readonly pointId: number;
  /** The player's version at the point: rebuilding gives the data as it was at that version. */
  readonly version: number;
  /** When the write that recorded this element ran. */
  readonly timeMs: number;
  readonly kind: string;
  readonly by: string;
  /** key -> stored entry it had at the point, or null when the key did not exist. */
  readonly previous: ReadonlyMap<string, Buffer | null>;
}

/** A restore point: one or more elements (the first write of its interval, then any key first changed later). */
export interface RestorePoint {
  readonly version: number;
  /** The first write after the point: when it ran (the point is the data just before), what kind, who. */
  readonly timeMs: number;
  readonly kind: string;
  readonly by: string;
  /** Every key written after the point within its interval (and, once thinned, its hour). */
  readonly keys: readonly string[];
}

export function parseHistoryElement(raw: Buffer): HistoryElement {
  const nl = raw.indexOf(0x0a);
  if (nl < 0) throw new Error('history element without a header line');
  const h = JSON.parse(raw.subarray(0, nl).toString('utf8')) as {
    i?: number; v: number; t: number; k: string; by: string; keys: string[] | Record<string, never>; lens: number[] | Record<string, never>;
  };
  // cjson encodes an empty Lua table as {}, not [].
  const keys = Array.isArray(h.keys) ? h.keys : [];
  const lens = Array.isArray(h.lens) ? h.lens : [];
  if (keys.length !== lens.length) throw new Error(`history element v${h.v}: ${keys.length} keys but ${lens.length} lengths`);
  const previous = new Map<string, Buffer | null>();
  let at = nl + 1;
  keys.forEach((key, i) => {
    const len = lens[i]!;
    if (len < 0) {
      previous.set(key, null);
      return;
    }
    if (at + len > raw.length) throw new Error(`history element v${h.v}: entry of ${key} runs past the end`);
    previous.set(key, raw.subarray(at, at + len));
    at += len;
  });
  const older = h.i === undefined;
  return { pointId: older ? h.t : h.i!, version: older ? h.v - 1 : h.v, timeMs: h.t, kind: h.k, by: h.by, previous };
}

/** The restore points of elements newest first (fine, then coarse), newest first. */
export function restorePoints(elements: readonly HistoryElement[]): RestorePoint[] {
  const points: Array<{ version: number; pointId: number; first: HistoryElement; keys: Set<string> }> = [];
  for (const element of elements) {
    const last = points[points.length - 1];
    if (last && last.version === element.version && last.pointId === element.pointId) {
      // Older than what the point had so far: its first write is this element's.
      last.first = element;
      for (const key of element.previous.keys()) last.keys.add(key);
    } else {
      points.push({ version: element.version, pointId: element.pointId, first: element, keys: new Set(element.previous.keys()) });
    }
  }
  return points.map((p) => ({ version: p.version, timeMs: p.first.timeMs, kind: p.first.kind, by: p.first.by, keys: [...p.keys] }));
}

/**
 * The data fields as they were at `target`, from the current fields (at `current`) and the
 * elements newest first; null when no restore point holds that version (never kept, thinned or
 * dropped). Every element down to the target's oldest is applied in turn, so each key ends with
 * its oldest record at or after the point. Version 0 is "no data": known without a point of its
 * own when the history reaches back to version 1 (histories from before restore points).
 */
export function rebuildAt(
  current: ReadonlyMap<string, Buffer>,
  currentVersion: number,
  elements: readonly HistoryElement[],
  target: number,
): Map<string, Buffer> | null {
  if (target === currentVersion) return new Map(current);
  if (target < 0 || target > currentVersion) return null;
  let last = -1;
  let oldest = currentVersion;
  elements.forEach((e, i) => {
    if (e.version === target) last = i;
    oldest = Math.min(oldest, e.version);
  });
  // Reaching back to version 1 is reaching the first write: before it, no data.
  if (last < 0) return target === 0 && oldest === 1 ? new Map() : null;
  const data = new Map(current);
  for (const e of elements.slice(0, last + 1)) {
    for (const [key, prev] of e.previous) {
      if (prev === null) data.delete(key);
      else data.set(key, prev);
    }
  }
  return data;
}
