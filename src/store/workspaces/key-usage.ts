// When each API key was last used: one hash per workspace (`pds:ws:{id}:lastused`, key id ->
// ms), written in batches by auth/last-used.ts and read by the usage report and key listing.
import { keys } from '../keys.js';
import { writePaced } from '../redis/paced-writes.js';
import type { RedisClient } from '../redis/redis.js';

export class KeyUsageStore {
  constructor(private readonly redis: RedisClient) {}

  /**
   * Writes one batch: workspace id -> flat [keyId, ms, keyId, ms, ...]. One script call per
   * workspace, paced (see paced-writes.ts); on a cluster each call goes to its own slot's node.
   * Rejects with the first failure; the caller keeps the batch for its next flush (the script
   * keeps the latest time, so writing a key twice is harmless).
   */
  async record(batch: ReadonlyMap<string, string[]>): Promise<void> {
    await writePaced(batch, ([ws, pairs]) => this.redis.touchKeys(keys.workspace(ws), keys.keyLastUsed(ws), ...pairs));
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
