// A player's versions as its restore points keep them (store/players/player-history.ts): the
// list, newest first, and the whole player at one of them. Support reads them through the admin
// side (admin/player-history.ts, audited, with restore); game code reads them through the public
// API (http/routes/versions.ts) with a write key.
import { decodeEntry, isoTime } from '../domain/entry.js';
import { AppError, ErrorCode } from '../errors.js';
import type { PlayerDataStore } from '../store/players/player-data.js';
import { parseHistoryElement, rebuildAt, restorePoints, type HistoryElement } from '../store/players/player-history.js';

export const HISTORY_PAGE_DEFAULT = 20;
export const HISTORY_PAGE_MAX = 100;

export interface HistoryVersion {
  readonly version: number;
  /**
   * For a restore point, the first write after it: when it ran (the point is the data just
   * before), what kind, who (`key:<id>` or `admin:<actor>`), and the keys written after it in
   * its interval. Null for the current version (and for a version 0 known without a point).
   */
  readonly time: string | null;
  readonly kind: string | null;
  readonly by: string | null;
  readonly keys: readonly string[] | null;
}

export interface PlayerHistory {
  readonly userId: string;
  /** The player's current version. */
  readonly version: number;
  /** Newest first; every one can be read (playerAtVersion) and restored. */
  readonly versions: readonly HistoryVersion[];
  /** Pass as `before` for the next page; null on the last one. */
  readonly nextBefore: number | null;
}

/** The whole player at one version: every key with its value and updated_at then. */
export type VersionData = Record<string, { value: unknown; updated_at: string }>;

export interface Loaded {
  readonly version: number;
  readonly data: Map<string, Buffer>;
  readonly elements: HistoryElement[];
}

/** `admit`: the byte budget for a large player, before it is read (PlayerDataStore.snapshot). */
export type AdmitRead = (bytes: number) => void | Promise<void>;

export async function load(players: PlayerDataStore, workspaceId: string, userId: string, admit?: AdmitRead): Promise<Loaded> {
  const snap = await players.snapshot(workspaceId, userId, admit);
  if (snap.version === 0) {
    throw new AppError(ErrorCode.PLAYER_NOT_FOUND, 'Player not found: it was never written', { extras: { version: 0 } });
  }
  return { version: snap.version, data: snap.data, elements: snap.history.map(parseHistoryElement) };
}

/**
 * Every version that can be rebuilt, newest first: the current one, then each restore point.
 * Version 0 (no data) too when the points reach back to the player's first write.
 */
export function chain(loaded: Loaded): HistoryVersion[] {
  const out: HistoryVersion[] = [{ version: loaded.version, time: null, kind: null, by: null, keys: null }];
  for (const point of restorePoints(loaded.elements)) {
    out.push({ version: point.version, time: isoTime(point.timeMs), kind: point.kind, by: point.by, keys: point.keys });
  }
  const oldest = out[out.length - 1]!.version;
  if (oldest === 1) out.push({ version: 0, time: null, kind: null, by: null, keys: null });
  return out;
}

function notRetained(version: number, loaded: Loaded): AppError {
  const message =
    version > loaded.version
      ? `Player is at version ${loaded.version}; version ${version} does not exist`
      : `Version ${version} is not retained: the history keeps a restore point per interval the player was written in (HISTORY_INTERVAL_SECONDS), thinned to one an hour after HISTORY_FINE_HOURS, for HISTORY_MAX_AGE_HOURS within HISTORY_MAX_BYTES; see the player's history for the versions kept`;
  return new AppError(ErrorCode.VERSION_NOT_RETAINED, message, { extras: { version: loaded.version } });
}

export function rebuilt(loaded: Loaded, version: number): Map<string, Buffer> {
  const data = rebuildAt(loaded.data, loaded.version, loaded.elements, version);
  if (!data) throw notRetained(version, loaded);
  return data;
}

export function decoded(key: string, stored: Buffer) {
  const entry = decodeEntry(stored.toString('utf8'));
  if (!entry) throw new AppError(ErrorCode.INTERNAL, `Stored entry "${key}" is not in the stored form`);
  return entry;
}

/** A page of the player's versions, newest first. */
export async function listVersions(
  players: PlayerDataStore,
  workspaceId: string,
  userId: string,
  page: { readonly limit: number; readonly before?: number | undefined },
  admit?: AdmitRead,
): Promise<{ version: number; versions: HistoryVersion[]; nextBefore: number | null }> {
  const loaded = await load(players, workspaceId, userId, admit);
  const all = chain(loaded).filter((v) => page.before === undefined || v.version < page.before);
  const versions = all.slice(0, page.limit);
  return { version: loaded.version, versions, nextBefore: all.length > page.limit ? versions[versions.length - 1]!.version : null };
}

/** The player as it was at `version`, key for key, and its current version. */
export async function versionData(
  players: PlayerDataStore,
  workspaceId: string,
  userId: string,
  version: number,
  admit?: AdmitRead,
): Promise<{ currentVersion: number; data: VersionData }> {
  const loaded = await load(players, workspaceId, userId, admit);
  const data: VersionData = {};
  for (const [key, stored] of [...rebuilt(loaded, version)].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))) {
    const entry = decoded(key, stored);
    // An own property even for `__proto__`, as in the export.
    Object.defineProperty(data, key, {
      value: { value: JSON.parse(entry.valueJson) as unknown, updated_at: isoTime(entry.updatedAtMs) },
      enumerable: true,
      writable: true,
      configurable: true,
    });
  }
  return { currentVersion: loaded.version, data };
}
