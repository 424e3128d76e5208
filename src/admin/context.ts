// What every admin operation needs: the stores, the clock, who is acting, and the audit trail.
// AdminOperations provides it; the operation modules take it, so they share one set of stores.
import type { Config } from '../config.js';
import type { Workspace } from '../domain/types.js';
import type { ApiKeyStore } from '../store/workspaces/api-keys.js';
import type { AuditEntry } from '../store/installation/audit-log.js';
import type { KeyUsageStore } from '../store/workspaces/key-usage.js';
import type { PlayerDataStore } from '../store/players/player-data.js';
import type { LeaderboardStore } from '../store/boards/leaderboard-store.js';
import type { FollowedWrites } from '../boards/followed-writes.js';
import type { RedisClient } from '../store/redis/redis.js';
import type { WorkspaceStore } from '../store/workspaces/workspaces.js';

export interface AuditFacts {
  readonly workspaceId?: string;
  readonly details?: AuditEntry['details'];
}

export interface AdminContext {
  readonly redis: RedisClient;
  readonly workspaces: WorkspaceStore;
  readonly apiKeys: ApiKeyStore;
  readonly keyUsage: KeyUsageStore;
  readonly players: PlayerDataStore;
  readonly boards: LeaderboardStore;
  /** Boards that follow a player key: an operator's writes put the stored value on them too. */
  readonly follow: FollowedWrites;
  readonly maxValueDepth: number;
  readonly limits: Config['limits'];
  /** Each plan's storage quota: an operator's restore is held to it (admin/player-history.ts). */
  readonly storageQuota: Config['storage']['quotaBytes'];
  /** The digest secret and retention of erasures (an import checks its tombstones). */
  readonly erasure: Config['erasure'];
  /** Who acts, for the audit trail and the players' history. */
  readonly actor: string;
  nowMs(): number;
  /** Appends one entry to the audit trail, naming the actor of this AdminOperations. */
  audit(action: string, target: string, facts?: AuditFacts): Promise<void>;
  /** The workspace, or 404. */
  requireWorkspace(id: string): Promise<Workspace>;
}
