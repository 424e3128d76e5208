// When each API key was last used: one hash per workspace (`pds:ws:{id}:lastused`, key id ->
// ms), written in batches by auth/last-used.ts and read by the usage report and key listing.
import { Cluster } from 'ioredis';
import { keys } from './keys.js';
import type { RedisClient } from './redis.js';

export class KeyUsageStore {
  constructor(private readonly redis: RedisClient) {}

  /**
   * Writes one batch: workspace id -> flat [keyId, ms, keyId, ms, ...]. One script call per
   * workspace, all sent in a single pipeline on one Redis; on a cluster each call goes to its
   * own slot's node, and auto-pipelining groups them per node.
   */
  async record(batch: ReadonlyMap<string, string[]>): Promise<void> {
    if (batch.size === 0) return;
    if (this.redis instanceof Cluster) {
      await Promise.all(
        [...batch].map(([ws, pairs]) => this.redis.touchKeys(keys.workspace(ws), keys.keyLastUsed(ws), ...pairs)),
      );
      return;
    }
    const pipeline = this.redis.pipeline();
    for (const [ws, pairs] of batch) pipeline.touchKeys(keys.workspace(ws), keys.keyLastUsed(ws), ...pairs);
    const replies = (await pipeline.exec()) ?? [];
    const failed = replies.find(([err]) => err);
    if (failed) throw failed[0];
  }

  /** Key id -> ms since the epoch of its last use, for the keys that were ever used. */
  async lastUsed(workspaceId: string): Promise<Map<string, number>> {
    const raw = await this.redis.hgetall(keys.keyLastUsed(workspaceId));
    const out = new Map<string, number>();
    for (const [keyId, ms] of Object.entries(raw)) {
      const n = Number(ms);
      if (Number.isSafeInteger(n)) out.set(keyId, n);
    }
    return out;
  }
}
