// The history sweep: restore points leave Redis with their retention whether or not their player
// is written again, and a workspace's history keeps within its bound (docs/history.md, "When
// history leaves"). Every instance runs it every HISTORY_SWEEP_SECONDS over every workspace, and
// the instance that takes a workspace's lease (SET NX PX, for one interval) sweeps it, so a
// workspace is swept once an interval however many instances run. Each player's step is one
// script in the player's slot (lua/history-sweep.lua) that answers the bytes it dropped and
// updates the player's own count in the same step: a player swept twice (a lease that lapsed
// mid-round) drops its bytes once, and the totals count them once.
//
// Per round and workspace:
//   1. idle players, those last written before the retention (or within one restore interval of
//      it): every point past it leaves (for those, the newest included), the lists, the index and
//      the hash's marks with them; the player leaves the history list once nothing is left.
//   2. a rolling walk of WALK_PER_ROUND players still within retention, from where the last
//      round stopped: their points past retention leave (a write does the same for its player),
//      and the rest are thinned as a write opening a point thins them (one an hour past
//      HISTORY_FINE_HOURS, one a day past HISTORY_HOURLY_HOURS), so a player who stopped playing
//      does not keep its last session's every point for the whole retention.
//   3. over the bound (HISTORY_QUOTA_SHARE of the plan's quota): players are shed to their
//      newest point, the longest idle first, until the history is within the bound.
import { randomUUID } from 'node:crypto';
import pMap from 'p-map';
import type { Config } from '../config.js';
import type { Plan } from '../domain/types.js';
import type { Logger } from '../logger.js';
import { keys } from '../store/keys.js';
import type { RedisClient } from '../store/redis/redis.js';
import { HistoryList, START, type ListedPlayer, type SweptPlayer } from '../store/workspaces/history-list.js';
import type { StorageUsage } from '../store/workspaces/storage-usage.js';

/** Players read from the list at a time, and swept at once (each one short script). */
const PAGE = 100;
const CONCURRENCY = 8;
/** Players of a workspace the rolling walk visits a round. */
export const WALK_PER_ROUND = 200;
/** Most players one round sheds or expires in a workspace: the rest wait for the next round. */
export const PLAYERS_PER_ROUND = 5000;

export interface SweepRound {
  readonly workspaces: number;
  readonly players: number;
  readonly droppedBytes: number;
}

export class HistorySweep {
  private readonly list: HistoryList;
  private readonly holder = randomUUID();
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<SweepRound> | undefined;

  constructor(
    private readonly redis: RedisClient,
    private readonly usage: StorageUsage,
    private readonly config: Pick<Config, 'history'> & { readonly storage: Pick<Config['storage'], 'quotaBytes'> },
    private readonly logger?: Logger,
    private readonly clock: () => number = Date.now,
  ) {
    this.list = new HistoryList(redis);
  }

  /** The workspace's history bound: HISTORY_QUOTA_SHARE of its plan's quota. */
  boundOf(plan: Plan): number {
    return Math.floor(this.config.history.quotaShare * this.config.storage.quotaBytes[plan]);
  }

  start(): void {
    this.timer ??= setInterval(() => {
      void this.round().catch((err: unknown) => this.logger?.warn({ err }, 'history sweep round failed'));
    }, this.config.history.sweepMs).unref();
  }

  async stop(): Promise<void> {
    clearInterval(this.timer);
    this.timer = undefined;
    await this.running?.catch(() => undefined);
  }

  /** One round over every workspace (a round still running is joined, not doubled). */
  round(): Promise<SweepRound> {
    this.running ??= this.sweepAll().finally(() => (this.running = undefined));
    return this.running;
  }

  private async sweepAll(): Promise<SweepRound> {
    let workspaces = 0;
    let players = 0;
    let droppedBytes = 0;
    let cursor = '0';
    do {
      const [next, ids] = await this.redis.sscan(keys.workspaceIndex(), cursor, 'COUNT', 200);
      cursor = next;
      for (const workspaceId of ids) {
        if (!(await this.list.lease(workspaceId, this.holder, this.config.history.sweepMs))) continue;
        const plan = await this.redis.hget(keys.workspace(workspaceId), 'plan');
        if (plan !== 'free' && plan !== 'pro') continue;
        const swept = await this.sweepWorkspace(workspaceId, plan);
        workspaces += 1;
        players += swept.players;
        droppedBytes += swept.droppedBytes;
      }
    } while (cursor !== '0');
    return { workspaces, players, droppedBytes };
  }

  /** One workspace's round (its lease held). */
  async sweepWorkspace(workspaceId: string, plan: Plan): Promise<{ players: number; droppedBytes: number }> {
    await this.list.seed(workspaceId);
    const now = this.clock();
    const oldestKept = now - this.config.history.maxAgeMs;
    const thin = { hourlyBeforeMs: now - this.config.history.fineMs, dailyBeforeMs: now - this.config.history.hourlyMs };
    let players = 0;
    let droppedBytes = 0;
    const sweep = async (batch: readonly ListedPlayer[], shed: boolean): Promise<SweptPlayer[]> => {
      const done = await pMap(batch, (p) => this.list.sweep(workspaceId, p.userId, oldestKept, shed, shed ? undefined : thin), { concurrency: CONCURRENCY });
      let dropped = 0;
      for (const d of done) dropped += d.dropped;
      if (dropped !== 0) this.usage.record(workspaceId, -dropped, 0, -dropped);
      players += batch.length;
      droppedBytes += dropped;
      return done;
    };

    // 1. Idle past the retention: all of their history leaves, and they leave the list. A
    // point's age is its interval's start, up to an interval before the write that opened it:
    // players last written within an interval of the retention may be due already.
    const dueBy = oldestKept + this.config.history.intervalMs;
    for (let stayed = 0; players < PLAYERS_PER_ROUND; ) {
      const batch = await this.list.between(workspaceId, -Infinity, dueBy, PAGE, stayed);
      if (batch.length === 0) break;
      const done = await sweep(batch, false);
      await this.list.unlist(workspaceId, batch.filter((_, i) => done[i]!.left === 0));
      stayed += done.filter((d) => d.left > 0).length;
      if (batch.length < PAGE) break;
    }

    // 2. The rolling walk over the players within retention.
    const walkedTo = await this.list.place(workspaceId, 'walk');
    // Those last written up to dueBy were step 1's.
    const walk = walkedTo.ms > dueBy ? walkedTo : { ms: dueBy, userId: '\uffff' };
    const walked = await this.list.after(workspaceId, walk, now, WALK_PER_ROUND);
    if (walked.length > 0) {
      const done = await sweep(walked, false);
      await this.list.unlist(workspaceId, walked.filter((_, i) => done[i]!.left === 0));
    }
    const next = walked.length < WALK_PER_ROUND ? START : walked[walked.length - 1]!;
    if (next.ms !== walkedTo.ms || next.userId !== walkedTo.userId) await this.list.setPlace(workspaceId, 'walk', next);

    // 3. Over the bound: the longest idle players keep only their newest point.
    const bound = this.boundOf(plan);
    const totals = await this.usage.current(workspaceId, now);
    let over = totals.historyBytes - bound;
    if (over > 0) {
      let shedFrom = await this.list.place(workspaceId, 'shed');
      let wrapped = false;
      while (over > 0 && players < PLAYERS_PER_ROUND) {
        const batch = await this.list.after(workspaceId, shedFrom, now, PAGE);
        if (batch.length === 0) {
          if (wrapped || !Number.isFinite(shedFrom.ms)) break;
          // At the end of the list: from the longest idle again (players written since may hold more).
          shedFrom = START;
          wrapped = true;
          continue;
        }
        const done = await sweep(batch, true);
        for (const d of done) over -= d.dropped;
        shedFrom = batch[batch.length - 1]!;
      }
      await this.list.setPlace(workspaceId, 'shed', shedFrom);
    }
    return { players, droppedBytes };
  }
}
