// Each workspace's requests and 429s per UTC day, for the usage report. Counted in memory on
// the hot path (a Map lookup) and added to Redis by lua/usage-add.lua every USAGE_FLUSH_MS, one
// call per workspace with new counts (paced: see paced-writes.ts), so usage costs no Redis call
// per request. A crash loses at most the counts of that instance's last interval; a clean stop
// writes them.
import { keys } from '../keys.js';
import { writePaced } from '../redis/paced-writes.js';
import { PendingBatch } from '../redis/pending-batch.js';
import type { RedisClient } from '../redis/redis.js';

/** Days of usage history kept (a day's counters expire after this many days). */
export const USAGE_RETENTION_DAYS = 31;

const DAY_MS = 86_400_000;
/** The last day computed: formatting a date on every request showed up in the CPU profile. */
let cachedDay = { start: -1, name: '' };

export function usageDay(nowMs: number): string {
  const start = nowMs - (nowMs % DAY_MS);
  if (start !== cachedDay.start) {
    cachedDay = { start, name: new Date(start).toISOString().slice(0, 10).replaceAll('-', '') };
  }
  return cachedDay.name;
}

interface Counts {
  requests: number;
  limited: number;
}

export class UsageCounter {
  /** Day name -> workspace id -> counts not yet written. */
  private readonly pending = new PendingBatch<string, Map<string, Counts>>((taken) => this.write(taken));
  private readonly retentionArg = String(USAGE_RETENTION_DAYS * 86_400);

  constructor(private readonly redis: RedisClient) {}

  /** Counts one answered request (`limited` when it was a 429). */
  count(workspaceId: string, nowMs: number, limited: boolean): void {
    const workspaces = this.pending.entry(usageDay(nowMs), () => new Map());
    const counts = workspaces.get(workspaceId);
    if (counts === undefined) workspaces.set(workspaceId, { requests: 1, limited: limited ? 1 : 0 });
    else {
      counts.requests++;
      if (limited) counts.limited++;
    }
  }

  /** Workspaces with counts waiting for the next flush. */
  get size(): number {
    let n = 0;
    for (const workspaces of this.pending.values()) n += workspaces.size;
    return n;
  }

  /** Writes the counts taken since the last flush; what fails to write is kept for the next. */
  readonly flush = this.pending.flush;

  /** Flushes every `intervalMs`, after `beforeEach` (the limiter forgets its idle windows). */
  start(intervalMs: number, beforeEach?: () => void): void {
    this.pending.start(intervalMs, beforeEach);
  }

  /** Stops the timer and writes the counts left. */
  stop(): Promise<void> {
    return this.pending.stop();
  }

  private async write(taken: Map<string, Map<string, Counts>>): Promise<void> {
    const failed: unknown[] = [];
    const items = [...taken].flatMap(([day, workspaces]) =>
      [...workspaces].map(([workspaceId, counts]) => ({ day, workspaceId, counts })),
    );
    await writePaced(items, async ({ day, workspaceId, counts }) => {
      try {
        await this.redis.usageAdd(keys.usage(workspaceId, day), String(counts.requests), String(counts.limited), this.retentionArg);
      } catch (err) {
        failed.push(err);
        this.restore(day, workspaceId, counts);
      }
    });
    if (failed.length > 0) throw failed[0];
  }

  private restore(day: string, workspaceId: string, counts: Counts): void {
    const workspaces = this.pending.entry(day, () => new Map());
    const now = workspaces.get(workspaceId);
    if (now === undefined) workspaces.set(workspaceId, counts);
    else {
      now.requests += counts.requests;
      now.limited += counts.limited;
    }
  }
}
