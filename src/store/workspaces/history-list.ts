// What the history sweep (saves/history-sweep.ts) reads and writes in Redis: each workspace's
// list of players that may hold history (keys.workspaceHistory, by last write), the sweep's place
// and lease in the workspace (keys.historySweep, keys.historySweepLease), and the per-player step
// (lua/history-sweep.lua). All of a workspace's keys here share its slot; each player's step runs
// in the player's own.
import { keys } from '../keys.js';
import type { RedisClient } from '../redis/redis.js';

export interface ListedPlayer {
  readonly userId: string;
  /** When the player was last written (ms). */
  readonly ms: number;
}

export interface SweptPlayer {
  /** Bytes of history that left (what the workspace's totals drop by). */
  readonly dropped: number;
  /** Restore points the player still holds. */
  readonly left: number;
  /** Bytes the step read inside Redis. */
  readonly work: number;
}

/**
 * The sweep's places outlive any pause of the sweep, and a hash a sweep wrote just after its
 * workspace was deleted does not stay for ever (lost, they only start the walks over).
 */
const PLACE_TTL_MS = 30 * 86_400_000;

/** Places the sweep keeps in a workspace's hash. */
export type SweepPlace = 'walk' | 'shed';

export class HistoryList {
  constructor(private readonly redis: RedisClient) {}

  /** Takes the workspace's sweep for `ms` unless another instance holds it; true when taken. */
  async lease(workspaceId: string, holder: string, ms: number): Promise<boolean> {
    return (await this.redis.set(keys.historySweepLease(workspaceId), holder, 'PX', ms, 'NX')) === 'OK';
  }

  /** Up to `limit` players last written in (`afterMs`, `upToMs`], oldest first, from `offset`. */
  async between(workspaceId: string, afterMs: number, upToMs: number, limit: number, offset = 0): Promise<ListedPlayer[]> {
    const low = Number.isFinite(afterMs) ? `(${afterMs}` : '-inf';
    const raw = await this.redis.zrange(keys.workspaceHistory(workspaceId), low, String(upToMs), 'BYSCORE', 'LIMIT', offset, limit, 'WITHSCORES');
    const out: ListedPlayer[] = [];
    for (let i = 0; i < raw.length; i += 2) out.push({ userId: raw[i]!, ms: Number(raw[i + 1]) });
    return out;
  }

  /**
   * Takes players whose history has left off the list, each only if not written since `ms`
   * (lua/index-players.lua's removal: a write noted meanwhile keeps it listed).
   */
  async unlist(workspaceId: string, players: readonly ListedPlayer[]): Promise<void> {
    if (players.length === 0) return;
    const pairs = players.flatMap((p) => [p.userId, String(-p.ms)]);
    await this.redis.indexPlayers(keys.workspace(workspaceId), keys.workspaceHistory(workspaceId), ...pairs);
  }

  /**
   * Once per workspace: lists the players of the players list (keys.workspacePlayers), for a
   * workspace written before the history list existed. Same slot, so one ZUNIONSTORE.
   */
  async seed(workspaceId: string): Promise<void> {
    if ((await this.redis.hsetnx(keys.historySweep(workspaceId), 'seeded', '1')) === 0) return;
    await this.redis.pexpire(keys.historySweep(workspaceId), PLACE_TTL_MS);
    const list = keys.workspaceHistory(workspaceId);
    await this.redis.call('ZUNIONSTORE', list, '2', list, keys.workspacePlayers(workspaceId), 'AGGREGATE', 'MAX');
  }

  async place(workspaceId: string, which: SweepPlace): Promise<number> {
    const value = await this.redis.hget(keys.historySweep(workspaceId), which);
    return value === null ? -Infinity : Number(value);
  }

  async setPlace(workspaceId: string, which: SweepPlace, ms: number): Promise<void> {
    if (Number.isFinite(ms)) {
      await this.redis.hset(keys.historySweep(workspaceId), which, String(ms));
      await this.redis.pexpire(keys.historySweep(workspaceId), PLACE_TTL_MS);
    } else await this.redis.hdel(keys.historySweep(workspaceId), which);
  }

  /** Drops the player's points older than `oldestKeptMs` (and all but the newest when `shed`). */
  async sweep(workspaceId: string, userId: string, oldestKeptMs: number, shed: boolean): Promise<SweptPlayer> {
    const [dropped, left, work] = await this.redis.historySweep(
      keys.player(workspaceId, userId),
      keys.playerHistory(workspaceId, userId),
      keys.playerHistoryCoarse(workspaceId, userId),
      keys.playerHistoryMeta(workspaceId, userId),
      String(Math.floor(oldestKeptMs)),
      shed ? '1' : '',
    );
    return { dropped: Number(dropped), left: Number(left), work: Number(work) };
  }
}
