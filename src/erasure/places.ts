// The other places a player lives, besides the keys carrying its hash tag (which the eraser
// finds and deletes whatever they are): stores that keep a player under keys of other slots,
// such as leaderboards (one sorted set per board, in the board's slot). Each offers
// removePlayer, and an erasure calls it for every workspace the player is erased in; it must
// be idempotent, since a job that failed or was interrupted runs again.
import { BOARD_ENTRY_BYTES } from '../store/boards/board-memory.js';
import type { LeaderboardStore } from '../store/boards/leaderboard-store.js';
import type { RedisClient } from '../store/redis/redis.js';
import { addToStorageTotals } from '../store/workspaces/storage-usage.js';

export interface PlayerPlace {
  /** Named in a failed job's error and in the logs. */
  readonly name: string;
  /** Removes everything this place keeps of the player in the workspace; nothing to remove is no error. */
  removePlayer(workspaceId: string, userId: string): Promise<unknown>;
}

/**
 * Every place a player lives outside its own slot, built from the installation's stores: the
 * service's workers and the CLI both erase through this list. A store that keeps players
 * elsewhere adds itself here.
 */
export function playerPlaces(redis: RedisClient, boards: LeaderboardStore): PlayerPlace[] {
  return [
    {
      name: 'leaderboards',
      // Every board and period of the workspace; the entries removed leave its storage total.
      async removePlayer(workspaceId, userId) {
        const { entriesDelta } = await boards.removePlayer(workspaceId, userId, Date.now());
        if (entriesDelta !== 0) await addToStorageTotals(redis, workspaceId, { boards: entriesDelta * BOARD_ENTRY_BYTES });
      },
    },
  ];
}
