// Tombstones of erased players: one key per erased player and workspace, named by a keyed
// digest (never the user id) and expiring with the retention, so an import of a backup taken
// before the erasure can skip the player. Beside them, a marker per workspace that has had
// erasures, so an import into any other workspace costs one EXISTS and needs no secret, and the
// key check that catches a process given another digest secret (its digests would never match).
import { keys } from '../keys.js';
import type { RedisClient } from '../redis/redis.js';

export class TombstoneStore {
  constructor(private readonly redis: RedisClient) {}

  /** Writes the tombstones and renews the workspaces' markers, all for `ms`. */
  async put(entries: ReadonlyArray<{ workspaceId: string; digest: string }>, atIso: string, ms: number): Promise<void> {
    await Promise.all(
      entries.flatMap(({ workspaceId, digest }) => [
        this.redis.set(keys.tombstone(digest), atIso, 'PX', ms),
        this.redis.set(keys.erasedIn(workspaceId), atIso, 'PX', ms),
      ]),
    );
  }

  /** Which of the digests have a tombstone. */
  async have(digests: readonly string[]): Promise<boolean[]> {
    return Promise.all(digests.map(async (digest) => (await this.redis.exists(keys.tombstone(digest))) === 1));
  }

  /** Whether the workspace has had players erased within the retention. */
  async erasedIn(workspaceId: string): Promise<boolean> {
    return (await this.redis.exists(keys.erasedIn(workspaceId))) === 1;
  }

  /**
   * The installation's key check: stored by the first process to erase, and compared by every
   * other. Answers whether `check` is the stored one (true when none was stored yet and `store` is set).
   */
  async keyCheckMatches(check: string, store: boolean): Promise<boolean> {
    if (store) await this.redis.set(keys.erasureKeyCheck(), check, 'NX');
    const stored = await this.redis.get(keys.erasureKeyCheck());
    return stored === null || stored === check;
  }
}
