// One player's history for support staff: the versions still retained, the whole player as it
// was at one of them, and a restore that makes the data what it was at that version as a NEW
// version (nothing is rewritten in place, so a restore can itself be undone). The history is
// what lua/write-player.lua keeps beside every write; store/players/player-history.ts rebuilds from it.
import { decodeEntry, isoTime } from '../domain/entry.js';
import { AppError, ErrorCode } from '../errors.js';
import type { Op } from '../store/players/script-protocol.js';
import { parseHistoryElement, rebuildAt, restorePoints, type HistoryElement } from '../store/players/player-history.js';
import type { AdminContext } from './context.js';
import { parsePositiveInt, parseUserId, parseVersion } from './inputs.js';
import { adminWrite } from './player-support.js';

export const HISTORY_PAGE_DEFAULT = 20;
export const HISTORY_PAGE_MAX = 100;
/** A game server's write between the read and the restore's write is retried this often. */
const RESTORE_ATTEMPTS = 3;

export interface HistoryVersion {
  readonly version: number;
  /**
   * The write that made this version: when, what kind, who (`key:<id>` or `admin:<actor>`),
   * the keys it changed. Null for the oldest version retained, whose write is older than the
   * history kept (and for version 0, the player before its first write).
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

export interface PlayerAtVersion {
  readonly workspaceId: string;
  readonly userId: string;
  readonly version: number;
  readonly currentVersion: number;
  readonly data: Record<string, { value: unknown; updated_at: string }>;
}

export interface RestoredPlayer {
  readonly userId: string;
  readonly restoredFrom: number;
  /** The new version the restore made (the current one when there was nothing to change). */
  readonly version: number;
  /** Keys written back and keys deleted. */
  readonly set: number;
  readonly deleted: number;
  /** The game server's session that `force` ended, or null. */
  readonly endedSession: { readonly sessionId: string; readonly owner: string } | null;
}

const target = (workspaceId: string, userId: string) => `player:${workspaceId}/${userId}`;

interface Loaded {
  readonly version: number;
  readonly data: Map<string, Buffer>;
  readonly elements: HistoryElement[];
}

async function load(ctx: AdminContext, workspaceId: string, userId: string): Promise<Loaded> {
  const snap = await ctx.players.snapshot(workspaceId, userId);
  if (snap.version === 0) {
    throw new AppError(ErrorCode.PLAYER_NOT_FOUND, 'Player not found: it was never written', { extras: { version: 0 } });
  }
  return { version: snap.version, data: snap.data, elements: snap.history.map(parseHistoryElement) };
}

/**
 * Every version that can be rebuilt, newest first: the current one, then each restore point.
 * Version 0 (no data) too when the points reach back to the player's first write.
 */
function chain(loaded: Loaded): HistoryVersion[] {
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

function rebuilt(loaded: Loaded, version: number): Map<string, Buffer> {
  const data = rebuildAt(loaded.data, loaded.version, loaded.elements, version);
  if (!data) throw notRetained(version, loaded);
  return data;
}

function decoded(key: string, stored: Buffer) {
  const entry = decodeEntry(stored.toString('utf8'));
  if (!entry) throw new AppError(ErrorCode.INTERNAL, `Stored entry "${key}" is not in the stored form`);
  return entry;
}

export async function playerHistory(
  ctx: AdminContext,
  workspaceId: string,
  rawUserId: string | number,
  options: { limit?: string | number | undefined; before?: string | number | undefined } = {},
): Promise<PlayerHistory> {
  await ctx.requireWorkspace(workspaceId);
  const userId = parseUserId(rawUserId);
  const limit = parsePositiveInt(options.limit ?? HISTORY_PAGE_DEFAULT, 'limit', HISTORY_PAGE_MAX);
  const before = options.before === undefined ? undefined : parseVersion(options.before, 'before');
  const loaded = await load(ctx, workspaceId, userId);
  const all = chain(loaded).filter((v) => before === undefined || v.version < before);
  const versions = all.slice(0, limit);
  return { userId, version: loaded.version, versions, nextBefore: all.length > limit ? versions[versions.length - 1]!.version : null };
}

export async function playerAtVersion(
  ctx: AdminContext,
  workspaceId: string,
  rawUserId: string | number,
  rawVersion: string | number,
): Promise<PlayerAtVersion> {
  await ctx.requireWorkspace(workspaceId);
  const userId = parseUserId(rawUserId);
  const version = parseVersion(rawVersion);
  const loaded = await load(ctx, workspaceId, userId);
  const data: PlayerAtVersion['data'] = {};
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
  // A read that shows a player's data to a person is audited, like player.get and player.export.
  await ctx.audit('player.version', target(workspaceId, userId), { workspaceId, details: { version, keys: Object.keys(data).length } });
  return { workspaceId, userId, version, currentVersion: loaded.version, data };
}

/** The ops that turn `current` into `wanted`: only what differs, so the restore's own history entry stays small. */
function restoreOps(current: ReadonlyMap<string, Buffer>, wanted: ReadonlyMap<string, Buffer>): { ops: Op[]; set: number; deleted: number } {
  const ops: Op[] = [];
  let set = 0;
  let deleted = 0;
  for (const [key, stored] of wanted) {
    const valueJson = decoded(key, stored).valueJson;
    const now = current.get(key);
    if (now === undefined || decoded(key, now).valueJson !== valueJson) {
      ops.push({ op: 'set', key, valueJson });
      set += 1;
    }
  }
  for (const key of current.keys()) {
    if (!wanted.has(key)) {
      ops.push({ op: 'delete', key });
      deleted += 1;
    }
  }
  // Nothing differs: write the keys back anyway, so that a restore is always a version of its own.
  if (ops.length === 0) {
    for (const [key, stored] of wanted) ops.push({ op: 'set', key, valueJson: decoded(key, stored).valueJson });
    set = ops.length;
  }
  return { ops, set, deleted };
}

function lockedBy(owner: string, expiresAtMs: number, version: number, forced: boolean): AppError {
  const expiresAt = isoTime(expiresAtMs);
  const message = forced
    ? `A game server took the player's session again (session of "${owner}" until ${expiresAt}) before the restore was written; nothing was restored: retry`
    : `Player is held by the session of "${owner}" until ${expiresAt}: the server would overwrite the restore with what it holds in memory. Restore with force to end its session first`;
  return new AppError(ErrorCode.SESSION_LOCKED, message, { extras: { version, data: { owner, expiresAt } } });
}

/**
 * Makes the player's data what it was at `version`, as a new version, in one write conditional
 * on the version read (a game server's write in between: read again and retry). While a live
 * session holds the player it is refused unless `force`, which first ends the session, so the
 * server's next write gets SESSION_LOST instead of overwriting the restore.
 */
export async function restorePlayer(
  ctx: AdminContext,
  workspaceId: string,
  rawUserId: string | number,
  rawVersion: string | number,
  options: { force?: boolean | undefined } = {},
): Promise<RestoredPlayer> {
  await ctx.requireWorkspace(workspaceId);
  const userId = parseUserId(rawUserId);
  const version = parseVersion(rawVersion);
  const force = options.force === true;
  let loaded = await load(ctx, workspaceId, userId);
  rebuilt(loaded, version); // 404 before a session is ended for nothing

  let endedSession: RestoredPlayer['endedSession'] = null;
  const { session } = await ctx.players.sessionOf(workspaceId, userId);
  if (session) {
    if (!force) throw lockedBy(session.owner, session.expiresAtMs, loaded.version, false);
    const { reply } = await ctx.players.session(workspaceId, userId, { action: 'release', sessionId: session.sessionId });
    if (reply.applied && reply.kind === 'released' && reply.released) endedSession = { sessionId: session.sessionId, owner: session.owner };
  }

  for (let attempt = 1; ; attempt++) {
    const { ops, set, deleted } = restoreOps(loaded.data, rebuilt(loaded, version));
    try {
      const applied =
        ops.length === 0
          ? { version: loaded.version } // version N and now are both empty: nothing to write
          : await adminWrite(ctx, workspaceId, userId, { ops, ifVersion: loaded.version }, 'restore');
      await ctx.audit('player.restore', target(workspaceId, userId), {
        workspaceId,
        details: { from: version, version: applied.version, set, deleted, force, endedSession: endedSession?.owner ?? null },
      });
      return { userId, restoredFrom: version, version: applied.version, set, deleted, endedSession };
    } catch (err) {
      if (err instanceof AppError && err.code === ErrorCode.SESSION_LOCKED) {
        const holder = err.extras.data as { owner: string; expiresAt: string } | undefined;
        throw lockedBy(holder?.owner ?? 'unknown', Date.parse(holder?.expiresAt ?? '') || 0, err.extras.version ?? loaded.version, force);
      }
      if (!(err instanceof AppError && err.code === ErrorCode.VERSION_CONFLICT) || attempt >= RESTORE_ATTEMPTS) throw err;
    }
    loaded = await load(ctx, workspaceId, userId);
  }
}
