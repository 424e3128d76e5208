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

/** A player of the list, as a place to go on from (ms -Infinity: the start). */
export interface ListPlace {
  readonly ms: number;
  readonly userId: string;
}

export const START: ListPlace = Object.freeze({ ms: -Infinity, userId: '' });

export class HistoryList {
  constructor(private readonly redis: RedisClient) {}

  /** Takes the workspace's sweep for `ms` unless another instance holds it; true when taken. */
  async lease(workspaceId: string, holder: string, ms: number): Promise<boolean> {
    return (await this.redis.set(keys.historySweepLease(workspaceId), holder, 'PX', ms, 'NX')) === 'OK';
  }

  /**
   * Up to `limit` players last written in (`afterMs`, `upToMs`] (`[afterMs`, with `from`), oldest
   * first, from `offset`.
   */
  async between(workspaceId: string, afterMs: number, upToMs: number, limit: number, offset = 0, from = false): Promise<ListedPlayer[]> {
    const low = Number.isFinite(afterMs) ? `${from ? '' : '('}${afterMs}` : '-inf';
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

  /** Where the sweep's `which` walk stopped: the start of the list when it never did, or wrapped. */
  async place(workspaceId: string, which: SweepPlace): Promise<ListPlace> {
    const value = await this.redis.hget(keys.historySweep(workspaceId), which);
    if (value === null) return START;
    // `<ms> <userId>`; a release before kept the ms alone (its players at that ms are walked again: harmless).
    const space = value.indexOf(' ');
    const ms = Number(space < 0 ? value : value.slice(0, space));
    return Number.isFinite(ms) ? { ms, userId: space < 0 ? '' : value.slice(space + 1) } : START;
  }

  async setPlace(workspaceId: string, which: SweepPlace, place: ListPlace): Promise<void> {
    if (Number.isFinite(place.ms)) {
      await this.redis.hset(keys.historySweep(workspaceId), which, `${place.ms} ${place.userId}`);
      await this.redis.pexpire(keys.historySweep(workspaceId), PLACE_TTL_MS);
    } else await this.redis.hdel(keys.historySweep(workspaceId), which);
  }

  /**
   * Up to `limit` players after `place` in the list's own order (last write, then id, as Redis
   * orders members of one score), last written at most `upToMs`. A place is a player, not only a
   * time: a batch's players share their last write's ms, and a walk that stopped among them goes
   * on with the rest of them rather than past them all.
   */
  async after(workspaceId: string, place: ListPlace, upToMs: number, limit: number): Promise<ListedPlayer[]> {
    if (!Number.isFinite(place.ms)) return this.between(workspaceId, -Infinity, upToMs, limit);
    const out: ListedPlayer[] = [];
    for (let offset = 0; out.length < limit; ) {
      // From the place's ms itself: those of that ms up to the place are skipped here.
      const page = await this.between(workspaceId, place.ms, upToMs, limit, offset, true);
      for (const p of page) if (p.ms > place.ms || p.userId > place.userId) out.push(p);
      if (page.length < limit) break;
      offset += page.length;
    }
    return out.slice(0, limit);
  }

  /**
   * Drops the player's points older than `oldestKeptMs` (and all but the newest when `shed`);
   * with `thin`, then thins the rest as a write opening a point does: to one an hour before
   * `hourlyBeforeMs`, one a day before `dailyBeforeMs`.
   */
  async sweep(
    workspaceId: string,
    userId: string,
    oldestKeptMs: number,
    shed: boolean,
    thin?: { readonly hourlyBeforeMs: number; readonly dailyBeforeMs: number },
  ): Promise<SweptPlayer> {
    const [dropped, left, work] = await this.redis.historySweep(
      keys.player(workspaceId, userId),
      keys.playerHistory(workspaceId, userId),
      keys.playerHistoryCoarse(workspaceId, userId),
      keys.playerHistoryMeta(workspaceId, userId),
      String(Math.floor(oldestKeptMs)),
      shed ? '1' : '',
      thin ? `${Math.max(0, Math.floor(thin.hourlyBeforeMs))} ${Math.max(0, Math.floor(thin.dailyBeforeMs))}` : '',
    );
    return { dropped: Number(dropped), left: Number(left), work: Number(work) };
  }
}
