// One player's history for support staff: the versions still retained, the whole player as it
// was at one of them, and a restore that makes the data what it was at that version as a NEW
// version (nothing is rewritten in place, so a restore can itself be undone). The history is
// what lua/write-player.lua keeps beside every write; store/players/player-history.ts rebuilds from it.
import { isoTime } from '../domain/entry.js';
import type { Plan } from '../domain/types.js';
import { AppError, ErrorCode } from '../errors.js';
import {
  decoded,
  HISTORY_PAGE_DEFAULT,
  HISTORY_PAGE_MAX,
  listVersions,
  load,
  rebuilt,
  versionData,
  type PlayerHistory,
  type VersionData,
} from '../saves/player-versions.js';
import { saveBytesOf } from '../saves/storage-quota.js';
import { REDIS_BYTES_PER_DATA_BYTE } from '../store/players/redis-memory.js';
import type { Op } from '../store/players/script-protocol.js';
import { readStorageTotals } from '../store/workspaces/storage-usage.js';
import type { AdminContext } from './context.js';
import { parsePositiveInt, parseUserId, parseVersion } from './inputs.js';
import { adminWrite } from './player-support.js';

export { HISTORY_PAGE_DEFAULT, HISTORY_PAGE_MAX, type HistoryVersion, type PlayerHistory } from '../saves/player-versions.js';
/** A game server's write between the read and the restore's write is retried this often. */
const RESTORE_ATTEMPTS = 3;

export interface PlayerAtVersion {
  readonly workspaceId: string;
  readonly userId: string;
  readonly version: number;
  readonly currentVersion: number;
  readonly data: VersionData;
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
  return { userId, ...(await listVersions(ctx.players, workspaceId, userId, { limit, before })) };
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
  const { currentVersion, data } = await versionData(ctx.players, workspaceId, userId, version);
  // A read that shows a player's data to a person is audited, like player.get and player.export.
  await ctx.audit('player.version', target(workspaceId, userId), { workspaceId, details: { version, keys: Object.keys(data).length } });
  return { workspaceId, userId, version, currentVersion, data };
}

/**
 * Refuses a restore that would take the workspace's data past its plan's quota (403
 * STORAGE_QUOTA_EXCEEDED, nothing written): an operator's restore is held to the quota as a
 * game's save is, by what it adds (the keys it sets, less what they and the keys it deletes
 * hold now). A restore that adds nothing always passes. Read from Redis's totals, as the admin
 * side keeps no count of its own.
 */
async function withinQuota(ctx: AdminContext, workspaceId: string, plan: Plan, current: ReadonlyMap<string, Buffer>, ops: readonly Op[]): Promise<void> {
  let adds = 0;
  for (const op of ops) {
    if (op.op === 'set') adds += op.key.length + ENTRY_FRAME_BYTES + op.valueJson.length;
    const now = current.get(op.key);
    if (now !== undefined) adds -= op.key.length + now.length;
  }
  if (adds <= 0) return;
  const quota = ctx.storageQuota[plan];
  // Weighed as the quota weighs a save: Redis bytes, estimated (saves/storage-quota.ts).
  const stored = saveBytesOf(await readStorageTotals(ctx.redis, workspaceId));
  adds = Math.round(adds * REDIS_BYTES_PER_DATA_BYTE);
  if (stored + adds > quota) {
    throw new AppError(
      ErrorCode.STORAGE_QUOTA_EXCEEDED,
      `Restoring would add ${adds} bytes to the ${stored} the workspace stores, past the ${plan} plan's quota of ${quota}: delete data, or move to a larger plan`,
    );
  }
}

/** A stored entry's `[updated_at_ms,` and `]` around its JSON (13-digit ms). */
const ENTRY_FRAME_BYTES = 16;

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
  const { plan } = await ctx.requireWorkspace(workspaceId);
  const userId = parseUserId(rawUserId);
  const version = parseVersion(rawVersion);
  const force = options.force === true;
  let loaded = await load(ctx.players, workspaceId, userId);
  // 404, or 403 past the quota, before a session is ended for nothing.
  await withinQuota(ctx, workspaceId, plan, loaded.data, restoreOps(loaded.data, rebuilt(loaded, version)).ops);

  let endedSession: RestoredPlayer['endedSession'] = null;
  const { session } = await ctx.players.sessionOf(workspaceId, userId);
  if (session) {
    if (!force) throw lockedBy(session.owner, session.expiresAtMs, loaded.version, false);
    const { reply } = await ctx.players.session(workspaceId, userId, { action: 'release', sessionId: session.sessionId });
    if (reply.applied && reply.kind === 'released' && reply.released) endedSession = { sessionId: session.sessionId, owner: session.owner };
  }

  for (let attempt = 1; ; attempt++) {
    const { ops, set, deleted } = restoreOps(loaded.data, rebuilt(loaded, version));
    if (attempt > 1) await withinQuota(ctx, workspaceId, plan, loaded.data, ops);
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
    loaded = await load(ctx.players, workspaceId, userId);
  }
}
