// The installation's traffic at a glance, for the console's overview: what every instance
// answered, per minute, added up in Redis. Each instance counts its public API's answers in
// memory (a few additions per request, no Redis call) and adds them every STATS_FLUSH_MS in one
// MULTI: requests, 429s, 5xx and a latency histogram per minute (a hash), requests per
// workspace per minute (a sorted set), and its heartbeat. Minutes are kept two hours. The
// overview then reads 60 hashes, one ZUNION and a few small keys: its cost does not grow with
// traffic, and at most with the number of workspaces active in the hour.
//
// Prometheus (/metrics) stays the place for alerting and long history; this is the shared,
// approximate view an operator opens without one: a crash loses at most one interval of one
// instance's counts, and percentiles are read from the histogram's buckets.
import { hostname } from 'node:os';
import { keys } from '../keys.js';
import type { RedisClient } from '../redis/redis.js';
import { masters } from '../redis/scan.js';
import { PendingBatch } from '../redis/pending-batch.js';

/** Upper bounds (ms) of the latency buckets; one more bucket above the last. */
export const LATENCY_BOUNDS_MS = [0.5, 1, 2, 3, 5, 7.5, 10, 15, 25, 40, 60, 100, 150, 250, 400, 600, 1000, 2500, 5000, 10_000];
export const MINUTE_MS = 60_000;
/** How long a minute's counts are kept: the overview shows one hour. */
const MINUTE_TTL_S = 2 * 3600;
/** Workspaces named per minute, at most: a flood of tiny workspaces cannot grow the set without end. */
const WORKSPACES_PER_MINUTE = 1000;

interface MinuteCounts {
  requests: number;
  limited: number;
  errors: number;
  latency: number[];
  workspaces: Map<string, number>;
}

export interface InstanceInfo {
  readonly gateMode: string;
}

function bucketOf(ms: number): number {
  let i = 0;
  while (i < LATENCY_BOUNDS_MS.length && ms > LATENCY_BOUNDS_MS[i]!) i++;
  return i;
}

export class TrafficStats {
  /** Minute (ms of its start) -> counts not yet written; flushed empty too, for the heartbeat. */
  private readonly pending = new PendingBatch<number, MinuteCounts>((taken) => this.write(taken), { writeEmpty: true });
  readonly instanceId: string;
  private readonly startedAt: number;

  constructor(
    private readonly redis: RedisClient,
    private readonly info: InstanceInfo,
    private readonly flushMs: number,
    private readonly clock: () => number = Date.now,
  ) {
    this.startedAt = clock();
    this.instanceId = `${hostname()}:${process.pid}:${this.startedAt.toString(36)}`;
  }

  /** Counts one answered public request. */
  count(atMs: number, status: number, ms: number, workspaceId: string | undefined): void {
    const minute = atMs - (atMs % MINUTE_MS);
    const counts = this.pending.entry(minute, () => ({
      requests: 0,
      limited: 0,
      errors: 0,
      latency: new Array<number>(LATENCY_BOUNDS_MS.length + 1).fill(0),
      workspaces: new Map(),
    }));
    counts.requests++;
    if (status === 429) counts.limited++;
    else if (status >= 500) counts.errors++;
    counts.latency[bucketOf(ms)]!++;
    if (workspaceId !== undefined && (counts.workspaces.size < WORKSPACES_PER_MINUTE || counts.workspaces.has(workspaceId))) {
      counts.workspaces.set(workspaceId, (counts.workspaces.get(workspaceId) ?? 0) + 1);
    }
  }

  /** Writes the counts and the heartbeat; counts that fail to write are kept for the next flush. */
  readonly flush = this.pending.flush;

  private async write(taken: Map<number, MinuteCounts>): Promise<void> {
    const now = this.clock();
    const multi = this.redis.multi();
    for (const [minute, c] of taken) {
      const hash = keys.statsMinute(minute);
      multi.hincrby(hash, 'requests', c.requests);
      if (c.limited) multi.hincrby(hash, 'limited', c.limited);
      if (c.errors) multi.hincrby(hash, 'errors', c.errors);
      c.latency.forEach((n, i) => n && multi.hincrby(hash, `l${i}`, n));
      multi.expire(hash, MINUTE_TTL_S);
      if (c.workspaces.size > 0) {
        const set = keys.statsMinuteWorkspaces(minute);
        for (const [ws, n] of c.workspaces) multi.zincrby(set, n, ws);
        multi.expire(set, MINUTE_TTL_S);
      }
    }
    const lease = Math.ceil((3 * this.flushMs) / 1000);
    multi.zadd(keys.statsInstances(), now, this.instanceId);
    multi.zremrangebyscore(keys.statsInstances(), '-inf', now - 24 * 3600_000);
    multi.hset(keys.statsInstance(this.instanceId), {
      host: hostname(),
      pid: process.pid,
      startedAt: this.startedAt,
      gateMode: this.info.gateMode,
    });
    multi.expire(keys.statsInstance(this.instanceId), lease);
    try {
      const replies = await multi.exec();
      const failed = replies?.find(([err]) => err);
      if (!replies || failed) throw failed?.[0] ?? new Error('the stats MULTI was discarded');
    } catch (err) {
      for (const [minute, c] of taken) this.restore(minute, c);
      throw err;
    }
  }

  private restore(minute: number, c: MinuteCounts): void {
    const now = this.pending.get(minute);
    if (now === undefined) {
      this.pending.set(minute, c);
      return;
    }
    now.requests += c.requests;
    now.limited += c.limited;
    now.errors += c.errors;
    c.latency.forEach((n, i) => (now.latency[i]! += n));
    for (const [ws, n] of c.workspaces) now.workspaces.set(ws, (now.workspaces.get(ws) ?? 0) + n);
  }

  start(): void {
    this.pending.start(this.flushMs);
    void this.flush().catch(() => {});
  }

  /** Stops the timer, writes what is left and says this instance is gone. */
  async stop(): Promise<void> {
    await this.pending.stop();
    await this.redis.multi().zrem(keys.statsInstances(), this.instanceId).del(keys.statsInstance(this.instanceId)).exec();
  }
}

export interface MinuteTotals {
  readonly minute: number;
  readonly requests: number;
  readonly limited: number;
  readonly errors: number;
  /** Counts per latency bucket (LATENCY_BOUNDS_MS, then one above). */
  readonly latency: readonly number[];
}

export interface InstanceSeen {
  readonly id: string;
  readonly host: string;
  readonly pid: number;
  readonly startedAt: number;
  readonly lastSeen: number;
  readonly gateMode: string;
}

export interface TrafficView {
  readonly minutes: readonly MinuteTotals[];
  /** Workspace id -> requests over the minutes read, the busiest first (at most `top`). */
  readonly busiest: ReadonlyArray<readonly [string, number]>;
  readonly instances: readonly InstanceSeen[];
}

/** The last `count` minutes up to `nowMs` (oldest first), the busiest workspaces over them, the live instances. */
export async function readTraffic(redis: RedisClient, nowMs: number, options: { count: number; top: number; aliveMs: number }): Promise<TrafficView> {
  const last = nowMs - (nowMs % MINUTE_MS);
  const starts = Array.from({ length: options.count }, (_, i) => last - (options.count - 1 - i) * MINUTE_MS);
  const [hashes, union, alive] = await Promise.all([
    Promise.all(starts.map((m) => redis.hgetall(keys.statsMinute(m)))),
    redis.zunion(starts.length, ...starts.map((m) => keys.statsMinuteWorkspaces(m)), 'AGGREGATE', 'SUM', 'WITHSCORES'),
    redis.zrangebyscore(keys.statsInstances(), nowMs - options.aliveMs, '+inf', 'WITHSCORES'),
  ]);
  const minutes = hashes.map((h, i) => ({
    minute: starts[i]!,
    requests: Number(h['requests'] ?? 0),
    limited: Number(h['limited'] ?? 0),
    errors: Number(h['errors'] ?? 0),
    latency: Array.from({ length: LATENCY_BOUNDS_MS.length + 1 }, (_, b) => Number(h[`l${b}`] ?? 0)),
  }));
  const totals: Array<[string, number]> = [];
  for (let i = 0; i < union.length; i += 2) totals.push([union[i]!, Number(union[i + 1])]);
  totals.sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : 1));
  const ids: Array<[string, number]> = [];
  for (let i = 0; i < alive.length; i += 2) ids.push([alive[i]!, Number(alive[i + 1])]);
  const details = await Promise.all(ids.map(([id]) => redis.hgetall(keys.statsInstance(id))));
  const instances = ids.flatMap(([id, lastSeen], i) => {
    const d = details[i]!;
    if (!d['host']) return [];
    return [{ id, host: d['host'], pid: Number(d['pid']), startedAt: Number(d['startedAt']), lastSeen, gateMode: d['gateMode'] ?? 'off' }];
  });
  return { minutes, busiest: totals.slice(0, options.top), instances };
}

/**
 * The workspaces storing the most (as their totals were last added up), largest first. Only
 * totals above 0: a total is briefly below 0 when a removal (an erasure, an operator's delete)
 * is added at once while the writes it undoes still wait in an instance's storage flush.
 */
export async function readLargestWorkspaces(redis: RedisClient, top: number): Promise<Array<[string, number]>> {
  const raw = await redis.zrevrangebyscore(keys.statsStorage(), '+inf', '(0', 'WITHSCORES', 'LIMIT', 0, top);
  const out: Array<[string, number]> = [];
  for (let i = 0; i < raw.length; i += 2) out.push([raw[i]!, Number(raw[i + 1])]);
  return out;
}

/** Redis's memory against maxmemory, added up over every master (one INFO each). */
export async function readMemory(redis: RedisClient): Promise<{ usedBytes: number; maxBytes: number; policy: string; nodes: number }> {
  const nodes = masters(redis);
  const infos = await Promise.all(nodes.map((n) => n.info('memory')));
  let usedBytes = 0;
  let maxBytes = 0;
  let policy = '';
  for (const text of infos) {
    const field = (name: string) => new RegExp(`^${name}:(.*)$`, 'm').exec(text)?.[1]?.trim() ?? '';
    usedBytes += Number(field('used_memory')) || 0;
    maxBytes += Number(field('maxmemory')) || 0;
    policy ||= field('maxmemory_policy');
  }
  return { usedBytes, maxBytes, policy, nodes: nodes.length };
}
