// The other places a player lives, besides the keys carrying its hash tag (which the eraser
// finds and deletes whatever they are): stores that keep a player under keys of other slots,
// such as leaderboards (one sorted set per board, in the board's slot). Each offers
// removePlayer, and an erasure calls it for every workspace the player is erased in; it must
// be idempotent, since a job that failed or was interrupted runs again.
import type { RedisClient } from '../store/redis/redis.js';

export interface PlayerPlace {
  /** Named in a failed job's error and in the logs. */
  readonly name: string;
  /** Removes everything this place keeps of the player in the workspace; nothing to remove is no error. */
  removePlayer(workspaceId: string, userId: string): Promise<unknown>;
}

/**
 * Every place a player lives outside its own slot, built from the installation's Redis: the
 * service's workers and the CLI both erase through this list. A store that keeps players
 * elsewhere adds itself here, one line.
 */
export function playerPlaces(_redis: RedisClient): PlayerPlace[] {
  return [
    // new LeaderboardStore(redis),
  ];
}
