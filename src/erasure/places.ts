// The other places a player lives, besides the keys carrying its hash tag (which the eraser
// finds and deletes whatever they are): stores that keep a player under keys of other slots,
// such as leaderboards (one sorted set per board, in the board's slot) and the workspace's
// players list. Each offers
// removePlayer, and an erasure calls it for every workspace the player is erased in; it must
// be idempotent, since a job that failed or was interrupted runs again.
import { BOARD_ENTRY_BYTES } from '../store/boards/board-memory.js';
import { removeFollowIntents } from '../store/boards/follow-intents.js';
import type { LeaderboardStore } from '../store/boards/leaderboard-store.js';
import type { RedisClient } from '../store/redis/redis.js';
import { PlayerIndexStore } from '../store/workspaces/player-index.js';
import { addToStorageTotals } from '../store/workspaces/storage-usage.js';

export interface PlayerPlace {
  /** Named in a failed job's error and in the logs. */
  readonly name: string;
  /** Removes everything this place keeps of the player in the workspace; nothing to remove is no error. */
  removePlayer(workspaceId: string, userId: string): Promise<unknown>;
}

/**
 * Every place a player lives outside its own slot, built from the installation's stores: the
 * service's workers and the CLI both erase through this list, in its order. A store that keeps
 * players elsewhere adds itself here, and docs/erasure.md's list of places.
 */
export function playerPlaces(redis: RedisClient, boards: LeaderboardStore): PlayerPlace[] {
  const index = new PlayerIndexStore(redis);
  return [
    {
      // First: a sweep of an intent left by a write just before the erasure would put the
      // player's id back on the boards' followed versions.
      name: 'followed writes in flight',
      removePlayer: (workspaceId, userId) => removeFollowIntents(redis, workspaceId, userId),
    },
    {
      name: 'leaderboards',
      // Every board and period of the workspace; the entries removed leave its storage total.
      async removePlayer(workspaceId, userId) {
        const { entriesDelta } = await boards.removePlayer(workspaceId, userId, Date.now());
        if (entriesDelta !== 0) await addToStorageTotals(redis, workspaceId, { boards: entriesDelta * BOARD_ENTRY_BYTES });
      },
    },
    {
      // The console's players list; a note of an earlier write that another instance adds late is
      // dropped when the list is read (PlayerIndexStore.rows).
      name: 'players list',
      removePlayer: (workspaceId, userId) => index.forget(workspaceId, userId),
    },
  ];
}
