// Erases a workspace: its keys, every player's data, its leaderboards, its own records. Nothing blocks Redis
// (SCAN pages and UNLINK, never KEYS or one huge DEL), it works on a cluster (every master is
// scanned), and it can be run again after an interruption: the steps go from what lets
// traffic in (keys) to what finds the workspace (its record, then the index), so an
// interrupted run leaves a workspace that is still found and can be deleted again.
import { notFound } from '../errors.js';
import { publishEvent } from '../store/redis/events.js';
import { keys } from '../store/keys.js';
import { unlinkMatching } from '../store/redis/scan.js';
import { forgetQuotaWarned } from '../store/workspaces/quota-levels.js';
import { GameMap } from '../store/installation/game-map.js';
import type { AdminContext } from './context.js';

export interface DeletedWorkspace {
  readonly workspaceId: string;
  readonly keysDeleted: number;
  readonly playersDeleted: number;
}

export interface DeletionProgress {
  readonly phase: 'keys' | 'players' | 'records';
  readonly done: number;
}

export interface DeletionOptions {
  /** Called after each batch: for progress output, and for tests to interrupt a run. */
  readonly onProgress?: (progress: DeletionProgress) => void | Promise<void>;
  /**
   * Sweep even when the workspace is no longer found: removes what a request still in flight
   * during an earlier deletion may have written after that deletion passed by.
   */
  readonly force?: boolean;
}

const KEY_BATCH = 100;

export async function deleteWorkspace(
  ctx: AdminContext,
  workspaceId: string,
  options: DeletionOptions = {},
): Promise<DeletedWorkspace> {
  const exists = (await ctx.workspaces.exists(workspaceId)) || (await ctx.workspaces.isIndexed(workspaceId));
  if (!exists && !options.force) throw notFound(`Workspace ${workspaceId} not found`);

  // 1. Keys first: once their records are gone and every instance has dropped its cache, no
  // new request reaches the workspace.
  const keyIds = await ctx.apiKeys.listIds(workspaceId);
  let keysDeleted = 0;
  for (let i = 0; i < keyIds.length; i += KEY_BATCH) {
    const batch = keyIds.slice(i, i + KEY_BATCH);
    await Promise.all(
      batch.map(async (keyId) => {
        const keyHash = await ctx.apiKeys.hashOf(keyId);
        await ctx.apiKeys.remove(keyId, keyHash);
        if (keyHash) await publishEvent(ctx.redis, { type: 'key', keyHash });
      }),
    );
    keysDeleted += batch.length;
    await options.onProgress?.({ phase: 'keys', done: keysDeleted });
  }

  // 2. Players (their data, history and kept answers), spread over every master.
  const playersDeleted = await unlinkMatching(
    ctx.redis,
    keys.playerPattern(workspaceId),
    (done) => options.onProgress?.({ phase: 'players', done }),
    keys.isPlayerHash,
  );

  // 3. Leaderboards: every period, meta and kept answer of every board, each board in its own slot.
  const boardKeys = await unlinkMatching(ctx.redis, keys.boardPattern(workspaceId));

  // 4. The idempotency claims, spread over tags of their own ({<ws>:<start of the key's hash>}).
  await unlinkMatching(ctx.redis, keys.idempotencyClaimPattern(workspaceId));

  // 5. The workspace's own slot: record, key set, rate-limit window, usage, last-use times, the
  // board registry, the erasure player names; and its games, which another workspace may then serve (a game of a deleted
  // workspace could otherwise be neither mapped elsewhere nor unmapped).
  const records = await unlinkMatching(ctx.redis, keys.workspacePattern(workspaceId));
  await new GameMap(ctx.redis).set(workspaceId, []);
  await options.onProgress?.({ phase: 'records', done: records });
  await ctx.redis.zrem(keys.statsStorage(), workspaceId);
  await forgetQuotaWarned(ctx.redis, workspaceId);
  await ctx.workspaces.unindex(workspaceId);
  await publishEvent(ctx.redis, { type: 'workspace', workspaceId });

  await ctx.audit('workspace.delete', `workspace:${workspaceId}`, {
    workspaceId,
    details: { keysDeleted, playersDeleted, boardKeys, force: options.force === true },
  });
  return { workspaceId, keysDeleted, playersDeleted };
}
