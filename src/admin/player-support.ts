// One player's data for support staff: read, overwrite, delete, export. Reads are audited too,
// since they show a player's data to a person. Values never go into the audit trail.
import { isoTime } from '../domain/entry.js';
import { checkValue } from '../domain/value.js';
import { badRequest, ErrorCode, notFound } from '../errors.js';
import type { AdminContext } from './context.js';
import { parseDataKey, parseUserId } from './inputs.js';

export interface PlayerEntry {
  readonly key: string;
  readonly value: unknown;
  readonly updated_at: string;
}

export interface PlayerExport {
  readonly workspaceId: string;
  readonly userId: string;
  readonly exportedAt: string;
  /** Every key of the player with its value and the time it was last written. */
  readonly data: Record<string, { value: unknown; updated_at: string }>;
}

const target = (workspaceId: string, userId: string) => `player:${workspaceId}/${userId}`;

export async function exportPlayer(ctx: AdminContext, workspaceId: string, rawUserId: string | number): Promise<PlayerExport> {
  await ctx.requireWorkspace(workspaceId);
  const userId = parseUserId(rawUserId);
  const entries = await ctx.players.getAllEntries(workspaceId, userId);
  if (entries.length === 0) throw notFound('Player not found', ErrorCode.PLAYER_NOT_FOUND);
  const data: PlayerExport['data'] = {};
  for (const [key, entry] of entries) {
    data[key] = { value: JSON.parse(entry.valueJson) as unknown, updated_at: isoTime(entry.updatedAtMs) };
  }
  await ctx.audit('player.export', target(workspaceId, userId), { workspaceId, details: { keys: entries.length } });
  return { workspaceId, userId, exportedAt: new Date(ctx.nowMs()).toISOString(), data };
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
  if (!result.found) throw result.playerExists ? notFound('Key not found', ErrorCode.KEY_NOT_FOUND) : notFound('Player not found', ErrorCode.PLAYER_NOT_FOUND);
  await ctx.audit('player.get', target(workspaceId, userId), { workspaceId, details: { key } });
  return { key, value: JSON.parse(result.entry.valueJson) as unknown, updated_at: isoTime(result.entry.updatedAtMs) };
}

export async function setPlayerValue(
  ctx: AdminContext,
  workspaceId: string,
  rawUserId: string | number,
  rawKey: string,
  value: unknown,
): Promise<PlayerEntry> {
  await ctx.requireWorkspace(workspaceId);
  const userId = parseUserId(rawUserId);
  const key = parseDataKey(rawKey);
  const problem = checkValue(value, ctx.maxValueDepth);
  if (problem) throw badRequest(`Invalid value: ${problem}`);
  const now = ctx.nowMs();
  await ctx.players.set(workspaceId, userId, key, JSON.stringify(value), now);
  await ctx.audit('player.set', target(workspaceId, userId), { workspaceId, details: { key } });
  return { key, value, updated_at: isoTime(now) };
}

/** Deletes one key, or (without a key) all of the player's data. Idempotent. */
export async function deletePlayerData(
  ctx: AdminContext,
  workspaceId: string,
  rawUserId: string | number,
  rawKey?: string,
): Promise<{ deleted: number }> {
  await ctx.requireWorkspace(workspaceId);
  const userId = parseUserId(rawUserId);
  const key = rawKey === undefined ? undefined : parseDataKey(rawKey);
  const deleted =
    key === undefined ? await ctx.players.deletePlayer(workspaceId, userId) : await ctx.players.deleteKey(workspaceId, userId, key);
  await ctx.audit('player.delete', target(workspaceId, userId), { workspaceId, details: { key: key ?? null, deleted } });
  return { deleted };
}
