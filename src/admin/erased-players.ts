// The import's hook for erased players (docs/erasure.md, "Backups"): a player with a tombstone
// in the target workspace is skipped and counted, and so is its entry on a leaderboard's line,
// so a backup taken before an erasure never brings the player back. A workspace that has had no erasure within the retention needs no
// check at all (and no digest secret); one that has needs the installation's secret, or the
// import is refused before anything is read.
import { tombstoneDigest } from '../domain/erasure.js';
import { requireDigestSecret } from '../erasure/requests.js';
import { TombstoneStore } from '../store/installation/tombstones.js';
import type { Config } from '../config.js';
import type { AdminContext } from './context.js';

export interface ErasedFilter {
  /** Whether the player was erased (and so must not be imported). */
  skips(userId: string): Promise<boolean>;
  /** Those of `userIds` that were erased (a board line's entries: one round of look-ups). */
  among(userIds: readonly string[]): Promise<Set<string>>;
}

const NONE: ErasedFilter = { skips: async () => false, among: async () => new Set() };

export async function erasedPlayersFilter(ctx: AdminContext & { readonly erasure: Config['erasure'] }, workspaceId: string): Promise<ErasedFilter> {
  const tombstones = new TombstoneStore(ctx.redis);
  if (!(await tombstones.erasedIn(workspaceId))) return NONE;
  const secret = await requireDigestSecret(ctx.redis, ctx.erasure, `An import into workspace ${workspaceId}, which has had players erased,`);
  return {
    skips: async (userId) => (await tombstones.have([tombstoneDigest(secret, workspaceId, userId)]))[0] === true,
    among: async (userIds) => {
      const found = await tombstones.have(userIds.map((userId) => tombstoneDigest(secret, workspaceId, userId)));
      return new Set(userIds.filter((_, i) => found[i]));
    },
  };
}
