// One player's data for support staff: read, overwrite, delete, export, and the session lock.
// Reads are audited too, since they show a player's data to a person. Values never go into the
// audit trail. Writes go through the same script as the game's (lua/write-player.lua): they
// raise the version, keep history, and are refused while a game server holds the player's
// session (SESSION_LOCKED), so the server cannot overwrite them with what it holds in memory.
import { isoTime } from '../domain/entry.js';
import { checkValue } from '../domain/value.js';
import { AppError, badRequest, ErrorCode, notFound } from '../errors.js';
import { appliedOrThrow } from '../saves/outcomes.js';
import { storedBytesOf, type PlayerWrite } from '../store/players/script-protocol.js';
import { addToStorageTotals, byMinute } from '../store/workspaces/storage-usage.js';
import { indexNote, recordPlayerWrites } from '../store/workspaces/player-index.js';
import type { AdminContext } from './context.js';
import { parseDataKey, parseUserId } from './inputs.js';

export interface PlayerEntry {
  readonly key: string;
  readonly value: unknown;
  readonly updated_at: string;
  readonly version: number;
}

export interface PlayerExport {
  readonly workspaceId: string;
  readonly userId: string;
  readonly exportedAt: string;
  readonly version: number;
  /** Every key of the player with its value and the time it was last written. */
  readonly data: Record<string, { value: unknown; updated_at: string }>;
}

export interface PlayerSessionView {
  readonly userId: string;
  readonly version: number;
  /** The live session, or null when no session holds the player. */
  readonly session: { readonly sessionId: string; readonly owner: string; readonly expiresAt: string } | null;
}

const target = (workspaceId: string, userId: string) => `player:${workspaceId}/${userId}`;

/** Every key of the player, `__proto__` included, as an own property (never the prototype). */
function exportData(entries: Array<[string, { valueJson: string; updatedAtMs: number }]>): PlayerExport['data'] {
  const data: PlayerExport['data'] = {};
  for (const [key, entry] of entries) {
    Object.defineProperty(data, key, {
      value: { value: JSON.parse(entry.valueJson) as unknown, updated_at: isoTime(entry.updatedAtMs) },
      enumerable: true,
      writable: true,
      configurable: true,
    });
  }
  return data;
}

export async function exportPlayer(
  ctx: AdminContext,
  workspaceId: string,
  rawUserId: string | number,
  purpose: 'export' | 'view' = 'export',
): Promise<PlayerExport> {
  await ctx.requireWorkspace(workspaceId);
  const userId = parseUserId(rawUserId);
  // Support staff may read a player of any size, one that predates the size limit included.
  const all = await ctx.players.readAll(workspaceId, userId, Number.MAX_SAFE_INTEGER);
  if (!all.complete || all.entries.length === 0) {
    throw new AppError(ErrorCode.PLAYER_NOT_FOUND, 'Player not found', { extras: { version: all.version } });
  }
  // Shown to a person either way, so audited either way; a page load is a view, not an export.
  await ctx.audit(purpose === 'view' ? 'player.view' : 'player.export', target(workspaceId, userId), { workspaceId, details: { keys: all.entries.length } });
  return { workspaceId, userId, exportedAt: new Date(ctx.nowMs()).toISOString(), version: all.version, data: exportData(all.entries) };
}

export async function getPlayerValue(
  ctx: AdminContext,
  workspaceId: string,
  rawUserId: string | number,
  rawKey: string,
): Promise<PlayerEntry> {
  await ctx.requireWorkspace(workspaceId);
  const userId = parseUserId(rawUserId);
  const key = parseDataKey(rawKey);
  const result = await ctx.players.get(workspaceId, userId, key);
  if (!result.found) {
    throw result.playerExists
      ? new AppError(ErrorCode.KEY_NOT_FOUND, 'Key not found', { extras: { version: result.version } })
      : new AppError(ErrorCode.PLAYER_NOT_FOUND, 'Player not found', { extras: { version: result.version } });
  }
  await ctx.audit('player.get', target(workspaceId, userId), { workspaceId, details: { key } });
  return {
    key,
    value: JSON.parse(result.entry.valueJson) as unknown,
    updated_at: isoTime(result.entry.updatedAtMs),
    version: result.version,
  };
}

/** A write of support staff: kind and `admin:<actor>` in the history, counted in the storage totals at once. */
export async function adminWrite(ctx: AdminContext, workspaceId: string, userId: string, write: PlayerWrite, kind: string) {
  const nowMs = ctx.nowMs();
  const reply = await ctx.follow.around(
    workspaceId,
    userId,
    write,
    nowMs,
    () => ctx.players.write(workspaceId, userId, write, { nowMs, kind, actor: `admin:${ctx.actor}` }),
    (r) => r.reply.applied,
  );
  // Counted at once: an operator's writes are few, and the CLI has no flush of its own.
  if (reply.reply.applied) {
    const storage = reply.reply.storage;
    await addToStorageTotals(ctx.redis, workspaceId, { bytes: storedBytesOf(storage), history: storage.historyBytes, players: storage.players, sessions: byMinute(storage.held) });
    await recordPlayerWrites(ctx.redis, workspaceId, [userId, String(indexNote(ctx.nowMs(), reply.reply.storage.players))]);
  }
  return appliedOrThrow(reply, {
    maxKeysPerPlayer: ctx.limits.maxKeysPerPlayer,
    maxPlayerBytes: ctx.limits.maxPlayerBytes,
    ifVersion: write.ifVersion,
  });
}

export async function setPlayerValue(
  ctx: AdminContext,
  workspaceId: string,
  rawUserId: string | number,
  rawKey: string,
  value: unknown,
  ifVersion?: number,
): Promise<PlayerEntry> {
  await ctx.requireWorkspace(workspaceId);
  const userId = parseUserId(rawUserId);
  const key = parseDataKey(rawKey);
  const problem = checkValue(value, ctx.maxValueDepth);
  if (problem) throw badRequest(`Invalid value: ${problem}`);
  const applied = await adminWrite(
    ctx,
    workspaceId,
    userId,
    { ops: [{ op: 'set', key, valueJson: JSON.stringify(value) }], ifVersion },
    'admin-set',
  );
  await ctx.audit('player.set', target(workspaceId, userId), { workspaceId, details: { key } });
  return { key, value, updated_at: isoTime(Number(applied.results[0])), version: applied.version };
}

/** Deletes one key, or (without a key) all of the player's data. Idempotent. */
export async function deletePlayerData(
  ctx: AdminContext,
  workspaceId: string,
  rawUserId: string | number,
  rawKey?: string,
  ifVersion?: number,
): Promise<{ deleted: number; version: number }> {
  await ctx.requireWorkspace(workspaceId);
  const userId = parseUserId(rawUserId);
  const key = rawKey === undefined ? undefined : parseDataKey(rawKey);
  const write: PlayerWrite = key === undefined ? { ops: [], deleteAll: true, ifVersion } : { ops: [{ op: 'delete', key }], ifVersion };
  const applied = await adminWrite(ctx, workspaceId, userId, write, 'admin-delete');
  const deleted = Number(applied.results[0]);
  await ctx.audit('player.delete', target(workspaceId, userId), { workspaceId, details: { key: key ?? null, deleted } });
  return { deleted, version: applied.version };
}

export async function playerSession(ctx: AdminContext, workspaceId: string, rawUserId: string | number): Promise<PlayerSessionView> {
  await ctx.requireWorkspace(workspaceId);
  const userId = parseUserId(rawUserId);
  const { version, session } = await ctx.players.sessionOf(workspaceId, userId);
  return {
    userId,
    version,
    session: session ? { sessionId: session.sessionId, owner: session.owner, expiresAt: isoTime(session.expiresAtMs) } : null,
  };
}

/** Ends the live session of a player (a server that crashed, a stuck lock); 404 when none holds it. */
export async function releasePlayerSession(
  ctx: AdminContext,
  workspaceId: string,
  rawUserId: string | number,
): Promise<{ released: boolean; sessionId: string; owner: string }> {
  await ctx.requireWorkspace(workspaceId);
  const userId = parseUserId(rawUserId);
  const { session } = await ctx.players.sessionOf(workspaceId, userId);
  if (!session) throw notFound(`No session holds player ${userId}`);
  const { reply } = await ctx.players.session(workspaceId, userId, { action: 'release', sessionId: session.sessionId });
  const released = reply.applied && reply.kind === 'released' && reply.released;
  // A player held without data leaves the held players of the totals (counted at once, as adminWrite).
  if (reply.applied && reply.held) await addToStorageTotals(ctx.redis, workspaceId, { sessions: byMinute(reply.held) });
  await ctx.audit('player.session.release', target(workspaceId, userId), {
    workspaceId,
    details: { owner: session.owner, released },
  });
  return { released, sessionId: session.sessionId, owner: session.owner };
}
