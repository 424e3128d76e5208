// Each workspace's stored bytes (data and history) and players with data. The player scripts
// report what each write added or removed (lua/write-player.lua); a workspace's total cannot
// be updated in the same step, since on a cluster the player lives in another slot. So each
// instance adds its writes' deltas up in memory and writes them to the workspace's total every
// STORAGE_FLUSH_MS (HINCRBY, paced like the usage counts), and learns the total from the reply.
// What an instance knows of a total is the total Redis last told it plus its own deltas since:
// exact with one instance, behind by the other instances' last interval with several.
import { keys } from '../keys.js';
import { writePaced } from '../redis/paced-writes.js';
import type { RedisClient } from '../redis/redis.js';
import { singleFlight } from '../redis/single-flight.js';

export interface StorageTotals {
  readonly bytes: number;
  readonly players: number;
}

interface Known {
  totals: StorageTotals;
  /** When Redis last told us the total. */
  at: number;
}

/** Adds deltas to a workspace's totals in Redis; answers the totals after the addition. */
export async function addToStorageTotals(redis: RedisClient, workspaceId: string, bytes: number, players: number): Promise<StorageTotals> {
  // Two plain commands, each atomic, sent in one write: a MULTI would double the commands of
  // every flush (measured: about one Redis command per request more with 2,000 workspaces).
  const key = keys.workspaceStorage(workspaceId);
  const [total, count] = await Promise.all([redis.hincrby(key, 'bytes', bytes), redis.hincrby(key, 'players', players)]);
  // The overview's largest workspaces, as of this addition (several instances may land out of
  // order: the next flush of the workspace puts it right; a ranking, not a bill).
  await redis.zadd(keys.statsStorage(), total, workspaceId);
  return { bytes: total, players: count };
}

/** A workspace's totals as Redis holds them. */
export async function readStorageTotals(redis: RedisClient, workspaceId: string): Promise<StorageTotals> {
  const [bytes, players] = await redis.hmget(keys.workspaceStorage(workspaceId), 'bytes', 'players');
  return { bytes: Number(bytes ?? 0), players: Number(players ?? 0) };
}

export class StorageUsage {
  private pending = new Map<string, { bytes: number; players: number }>();
  /**
   * Deltas a flush has taken and sent, until Redis's answer (which includes them) is known:
   * counted meanwhile, or the instance would forget its own writes for a round trip and let a
   * write through at the quota (test/saves/storage-quota.test.ts saw a batch accepted after a 403).
   */
  private flushing = new Map<string, { bytes: number; players: number }>();
  private readonly known = new Map<string, Known>();
  private timer: NodeJS.Timeout | undefined;

  constructor(
    private readonly redis: RedisClient,
    private readonly refreshMs: number,
  ) {}

  /** Adds one write's deltas (an applied write's reply, never a replay's). */
  record(workspaceId: string, bytes: number, players: number): void {
    if (bytes === 0 && players === 0) return;
    const pending = this.pending.get(workspaceId);
    if (pending === undefined) this.pending.set(workspaceId, { bytes, players });
    else {
      pending.bytes += bytes;
      pending.players += players;
    }
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
    await this.flush();
  }

  private withPending(workspaceId: string, totals: StorageTotals): StorageTotals {
    let { bytes, players } = totals;
    for (const deltas of [this.pending.get(workspaceId), this.flushing.get(workspaceId)]) {
      if (deltas === undefined) continue;
      bytes += deltas.bytes;
      players += deltas.players;
    }
    return { bytes, players };
  }

  private async read(workspaceId: string, nowMs: number): Promise<StorageTotals> {
    const totals = await readStorageTotals(this.redis, workspaceId);
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
          const totals = await addToStorageTotals(this.redis, workspaceId, delta.bytes, delta.players);
          // In one step: the answer includes these deltas, so they stop being counted apart.
          this.known.set(workspaceId, { totals, at: Date.now() });
          taken.delete(workspaceId);
        } catch (err) {
          failed.push(err);
          taken.delete(workspaceId);
          this.record(workspaceId, delta.bytes, delta.players);
        }
      });
    } finally {
      this.flushing = new Map();
    }
    if (failed.length > 0) throw failed[0];
  }
}
