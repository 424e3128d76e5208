// Each workspace's stored bytes and players with data. Everything a workspace makes Redis keep
// is counted here, in three parts of one hash (keys.workspaceStorage):
//   bytes    players' data and history, from the player scripts' deltas (lua/write-player.lua);
//            recounted from the players themselves when deltas may have been lost (reconcile)
//   boards   leaderboard entries (store/boards/)
//   kept:<h> answers kept for Idempotency-Keys, by the UTC hour they were kept in: they expire
//            by themselves after IDEMPOTENCY_TTL_SECONDS, so their bytes count only while an
//            hour's answers can still be alive
// A workspace's total cannot be updated in the same step as a player's write, since on a cluster
// the player lives in another slot. So each instance adds its deltas up in memory and writes them
// to the workspace's hash every STORAGE_FLUSH_MS (HINCRBY, paced like the usage counts), and
// learns the total from the reply. What an instance knows of a total is the total Redis last
// told it plus its own deltas since: exact with one instance, behind by the other instances'
// last interval with several.
import { keys } from '../keys.js';
import { writePaced } from '../redis/paced-writes.js';
import type { RedisClient } from '../redis/redis.js';
import { singleFlight } from '../redis/single-flight.js';
import { sumPlayerSizes } from '../players/player-sizes.js';

export interface StorageTotals {
  /** Everything counted: the players' bytes, the leaderboards' and the kept answers'. */
  readonly bytes: number;
  readonly players: number;
  /** The parts of `bytes` that are not players' data and history. */
  readonly boardBytes: number;
  readonly keptBytes: number;
}

/** What one write (or a flush of many) adds to a workspace's totals. */
export interface StorageChange {
  readonly bytes?: number;
  readonly players?: number;
  readonly boards?: number;
  /** Bytes of answers kept for Idempotency-Keys, by the hour (ms since the epoch / 3,600,000) they were kept in. */
  readonly kept?: ReadonlyMap<number, number>;
}

const HOUR_MS = 3_600_000;
const KEPT = 'kept:';
/** Hours a kept answer may live when the caller does not say (IDEMPOTENCY_TTL_SECONDS's default, plus the hour it was kept in). */
const DEFAULT_KEPT_HOURS = 25;

interface Known {
  totals: StorageTotals;
  /** When Redis last told us the total. */
  at: number;
}

interface Pending {
  bytes: number;
  players: number;
  boards: number;
  kept: Map<number, number>;
}

const emptyPending = (): Pending => ({ bytes: 0, players: 0, boards: 0, kept: new Map() });

/** The totals of a storage hash's fields at `nowMs`: kept answers of hours that may still be alive only. */
function totalsOf(fields: Record<string, string>, nowMs: number, keptHours: number): { totals: StorageTotals; expired: string[] } {
  const oldestLive = Math.floor(nowMs / HOUR_MS) - keptHours;
  let kept = 0;
  const expired: string[] = [];
  for (const [field, value] of Object.entries(fields)) {
    if (!field.startsWith(KEPT)) continue;
    if (Number(field.slice(KEPT.length)) < oldestLive) expired.push(field);
    else kept += Number(value);
  }
  const players = Number(fields['bytes'] ?? 0);
  const boards = Number(fields['boards'] ?? 0);
  return { totals: { bytes: players + boards + kept, players: Number(fields['players'] ?? 0), boardBytes: boards, keptBytes: kept }, expired };
}

/**
 * Adds a change to a workspace's totals in Redis; answers the totals after it. Kept answers'
 * hours that can no longer hold a live answer are dropped from the hash on the way.
 */
export async function addToStorageTotals(
  redis: RedisClient,
  workspaceId: string,
  change: StorageChange,
  options: { nowMs?: number; keptHours?: number } = {},
): Promise<StorageTotals> {
  const key = keys.workspaceStorage(workspaceId);
  // Plain commands, each atomic, sent in one write: a MULTI would double the commands of every
  // flush (measured: about one Redis command per request more with 2,000 workspaces).
  const writes: Array<Promise<unknown>> = [];
  if (change.bytes) writes.push(redis.hincrby(key, 'bytes', change.bytes));
  if (change.players) writes.push(redis.hincrby(key, 'players', change.players));
  if (change.boards) writes.push(redis.hincrby(key, 'boards', change.boards));
  for (const [hour, bytes] of change.kept ?? []) if (bytes) writes.push(redis.hincrby(key, `${KEPT}${hour}`, bytes));
  const [fields] = await Promise.all([redis.hgetall(key), ...writes]);
  const { totals, expired } = totalsOf(fields, options.nowMs ?? Date.now(), options.keptHours ?? DEFAULT_KEPT_HOURS);
  if (expired.length > 0) await redis.hdel(key, ...expired);
  return totals;
}

/** A workspace's totals as Redis holds them. */
export async function readStorageTotals(redis: RedisClient, workspaceId: string, options: { nowMs?: number; keptHours?: number } = {}): Promise<StorageTotals> {
  const fields = await redis.hgetall(keys.workspaceStorage(workspaceId));
  return totalsOf(fields, options.nowMs ?? Date.now(), options.keptHours ?? DEFAULT_KEPT_HOURS).totals;
}

export class StorageUsage {
  private pending = new Map<string, Pending>();
  /**
   * Deltas a flush has taken and sent, until Redis's answer (which includes them) is known:
   * counted meanwhile, or the instance would forget its own writes for a round trip and let a
   * write through at the quota (test/saves/storage-quota.test.ts saw a batch accepted after a 403).
   */
  private flushing = new Map<string, Pending>();
  private readonly known = new Map<string, Known>();
  private timer: NodeJS.Timeout | undefined;
  /** Recounts waiting to run, and when each workspace was last recounted (reconcile). */
  private readonly recounts = new Map<string, NodeJS.Timeout>();
  private readonly recountedAt = new Map<string, number>();
  /** Hours a kept answer may live: IDEMPOTENCY_TTL_SECONDS, rounded up, plus the hour it was kept in. */
  private readonly keptHours: number;

  constructor(
    private readonly redis: RedisClient,
    private readonly refreshMs: number,
    options: { readonly keptSeconds?: number; readonly recount?: { readonly delayMs: number; readonly minGapMs: number } } = {},
  ) {
    this.keptHours = options.keptSeconds === undefined ? DEFAULT_KEPT_HOURS : Math.ceil(options.keptSeconds / 3600) + 1;
    this.recount = options.recount ?? { delayMs: 5000, minGapMs: 30_000 };
  }

  private readonly recount: { readonly delayMs: number; readonly minGapMs: number };

  /** Adds one write's deltas (an applied write's reply, never a replay's). */
  record(workspaceId: string, bytes: number, players: number): void {
    if (bytes === 0 && players === 0) return;
    const pending = this.pendingOf(workspaceId);
    pending.bytes += bytes;
    pending.players += players;
  }

  /** Adds leaderboard entries' bytes (negative for entries removed). */
  recordBoards(workspaceId: string, bytes: number): void {
    if (bytes !== 0) this.pendingOf(workspaceId).boards += bytes;
  }

  /** Adds the bytes of answers kept for Idempotency-Keys now; they stop counting once they can no longer be alive. */
  recordKept(workspaceId: string, bytes: number, nowMs: number): void {
    if (bytes <= 0) return;
    const kept = this.pendingOf(workspaceId).kept;
    const hour = Math.floor(nowMs / HOUR_MS);
    kept.set(hour, (kept.get(hour) ?? 0) + bytes);
  }

  /**
   * The workspace's totals as this instance knows them: synchronous while what Redis last said
   * is fresh (the common case), a promise when it must be read first.
   */
  current(workspaceId: string, nowMs: number): StorageTotals | Promise<StorageTotals> {
    const known = this.known.get(workspaceId);
    if (known !== undefined && nowMs - known.at < this.refreshMs) return this.withPending(workspaceId, known.totals);
    return this.read(workspaceId, nowMs).then((totals) => this.withPending(workspaceId, totals));
  }

  /** Writes the deltas taken since the last flush; what fails to write is kept for the next. */
  readonly flush = singleFlight(() => this.write());

  start(intervalMs: number): void {
    this.timer = setInterval(() => void this.flush().catch(() => {}), intervalMs);
    this.timer.unref();
  }

  async stop(): Promise<void> {
    clearInterval(this.timer);
    for (const timer of this.recounts.values()) clearTimeout(timer);
    this.recounts.clear();
    await this.flush();
  }

  /**
   * Recounts the workspace's players' bytes from the players' own meta soon (after `delayMs`,
   * so that writes whose answers were lost have run in Redis), at most once every `minGapMs`
   * per workspace: what a write whose outcome is unknown stored was never reported, and its
   * provisional count (record) is only a guess.
   */
  scheduleRecount(workspaceId: string, nowMs: number): void {
    if (this.recounts.has(workspaceId)) return;
    const last = this.recountedAt.get(workspaceId) ?? -Infinity;
    const delay = Math.max(this.recount.delayMs, last + this.recount.minGapMs - nowMs);
    const timer = setTimeout(() => {
      this.recounts.delete(workspaceId);
      this.recountedAt.set(workspaceId, Date.now());
      void this.reconcile(workspaceId).catch(() => {});
    }, delay);
    timer.unref();
    this.recounts.set(workspaceId, timer);
  }

  /**
   * Sets the workspace's players' bytes and count to what its players hold (their own \0b, \0h,
   * \0n), as a correction added to the total rather than a value written over it, so that
   * other instances' flushes during the recount are kept. This instance's own deltas are
   * flushed first. A write to a player the walk has already passed, made while it walks and
   * flushed by then, can be counted twice until the next recount: the error is at most what
   * the workspace writes during one walk. Boards and kept answers are counted apart and not
   * recounted here.
   */
  async reconcile(workspaceId: string): Promise<{ before: StorageTotals; after: StorageTotals }> {
    await this.flush();
    const options = { keptHours: this.keptHours };
    const before = await readStorageTotals(this.redis, workspaceId, options);
    const held = await sumPlayerSizes(this.redis, workspaceId);
    const playersBytes = before.bytes - before.boardBytes - before.keptBytes;
    const after = await addToStorageTotals(this.redis, workspaceId, { bytes: held.bytes - playersBytes, players: held.players - before.players }, options);
    this.known.set(workspaceId, { totals: after, at: Date.now() });
    return { before, after };
  }

  private pendingOf(workspaceId: string): Pending {
    let pending = this.pending.get(workspaceId);
    if (pending === undefined) {
      pending = emptyPending();
      this.pending.set(workspaceId, pending);
    }
    return pending;
  }

  private withPending(workspaceId: string, totals: StorageTotals): StorageTotals {
    let { bytes, players, boardBytes, keptBytes } = totals;
    for (const deltas of [this.pending.get(workspaceId), this.flushing.get(workspaceId)]) {
      if (deltas === undefined) continue;
      let kept = 0;
      for (const b of deltas.kept.values()) kept += b;
      bytes += deltas.bytes + deltas.boards + kept;
      players += deltas.players;
      boardBytes += deltas.boards;
      keptBytes += kept;
    }
    return { bytes, players, boardBytes, keptBytes };
  }

  private async read(workspaceId: string, nowMs: number): Promise<StorageTotals> {
    const totals = await readStorageTotals(this.redis, workspaceId, { nowMs, keptHours: this.keptHours });
    this.known.set(workspaceId, { totals, at: nowMs });
    return totals;
  }

  private async write(): Promise<void> {
    if (this.pending.size === 0) return;
    const taken = this.pending;
    this.pending = new Map();
    this.flushing = taken;
    const failed: unknown[] = [];
    try {
      await writePaced(taken, async ([workspaceId, delta]) => {
        try {
          const totals = await addToStorageTotals(this.redis, workspaceId, delta, { keptHours: this.keptHours });
          // In one step: the answer includes these deltas, so they stop being counted apart.
          this.known.set(workspaceId, { totals, at: Date.now() });
          taken.delete(workspaceId);
        } catch (err) {
          failed.push(err);
          taken.delete(workspaceId);
          const pending = this.pendingOf(workspaceId);
          pending.bytes += delta.bytes;
          pending.players += delta.players;
          pending.boards += delta.boards;
          for (const [hour, bytes] of delta.kept) pending.kept.set(hour, (pending.kept.get(hour) ?? 0) + bytes);
        }
      });
    } finally {
      this.flushing = new Map();
    }
    if (failed.length > 0) throw failed[0];
  }
}
