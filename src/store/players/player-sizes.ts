// What a workspace's players hold, summed from each player's own meta (\0b data bytes, \0h
// history bytes, \0n data keys; lua/write-player.lua keeps them in the same step as every
// write): the ground truth the workspace's storage totals are recounted from
// (store/workspaces/storage-usage.ts, reconcile).
import { keys } from '../keys.js';
import { scanMatching } from '../redis/scan.js';
import type { RedisClient } from '../redis/redis.js';

export interface PlayersSize {
  /** Bytes of data and history of every player. */
  readonly bytes: number;
  /** The part of `bytes` that is history. */
  readonly historyBytes: number;
  /** Players holding at least one data key. */
  readonly players: number;
}

/**
 * Every player hash of the workspace, a page of SCAN at a time on each master, its meta read in
 * one pipeline a page. A player written before versions existed has no meta and is not counted
 * (the totals never counted it either, until its next write computes its meta).
 */
export async function sumPlayerSizes(redis: RedisClient, workspaceId: string): Promise<PlayersSize> {
  let bytes = 0;
  let historyBytes = 0;
  let players = 0;
  await scanMatching(redis, keys.playerHashPattern(workspaceId), async (node, found) => {
    const hashes = found.filter(keys.isPlayerHash);
    if (hashes.length === 0) return;
    const replies = (await node.pipeline(hashes.map((key) => ['hmget', key, '\0b', '\0h', '\0n'])).exec()) ?? [];
    for (const [err, meta] of replies) {
      if (err) throw err;
      const [b, h, n] = meta as Array<string | null>;
      bytes += Number(b ?? 0) + Number(h ?? 0);
      historyBytes += Number(h ?? 0);
      if (Number(n ?? 0) > 0) players += 1;
    }
  });
  return { bytes, historyBytes, players };
}
