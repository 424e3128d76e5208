// The erasure jobs as Redis holds them: a hash per job, a stream of the jobs not yet done that
// every instance's worker reads through one consumer group (XREADGROUP for new entries,
// XAUTOCLAIM for entries whose worker went quiet, XACK and XDEL when done), a lease per job so
// that one worker runs it at a time, the listing and the counts. Every change of a job's state
// is one script (lua/erasure-transition.lua), so the counts never drift from the jobs.
import { keys } from '../keys.js';
import type { RedisClient } from '../redis/redis.js';

export const ERASURE_GROUP = 'erasers';

export interface ErasureCounts {
  /** Jobs ever recorded, and ever finished. */
  readonly requested: number;
  readonly done: number;
  /** Jobs now waiting to run (or running), failing (retried later), waiting for a game's mapping. */
  readonly pending: number;
  readonly failed: number;
  readonly unmapped: number;
}

/** A stream entry delivered to this worker: the job it names. */
export interface JobEntry {
  readonly entryId: string;
  readonly jobId: string;
}

export type Transition = 'done' | 'failed' | 'unmapped' | 'requeue';

function entriesOf(raw: unknown): JobEntry[] {
  const out: JobEntry[] = [];
  for (const item of (raw as Array<[string, string[] | null]> | null) ?? []) {
    const [entryId, fields] = item;
    // A deleted entry still pending shows with no fields: nothing to run.
    const at = fields ? fields.indexOf('job') : -1;
    if (at >= 0 && fields![at + 1]) out.push({ entryId, jobId: fields![at + 1]! });
  }
  return out;
}

export class ErasureJobStore {
  constructor(private readonly redis: RedisClient) {}

  /** Creates the consumer group (from the stream's start, so jobs recorded before any worker ran are read). */
  async ensureGroup(): Promise<void> {
    try {
      await this.redis.xgroup('CREATE', keys.erasureStream(), ERASURE_GROUP, '0', 'MKSTREAM');
    } catch (err) {
      if (!/BUSYGROUP/.test((err as Error).message)) throw err;
    }
  }

  /** Records a job; with a notification marker, only the first time (else the job already made for it). */
  async record(
    jobId: string,
    fields: Record<string, string>,
    options: { nowMs: number; notificationHash?: string | undefined; markerMs: number; listedMs: number },
  ): Promise<{ recorded: boolean; jobId: string }> {
    const [recorded, id] = await this.redis.erasureRequest(
      keys.erasureJob(jobId),
      keys.erasureStream(),
      keys.erasureIndex(),
      keys.erasureStats(),
      keys.erasureNotification(options.notificationHash ?? '-'),
      jobId,
      String(options.nowMs),
      options.notificationHash === undefined ? '' : String(options.markerMs),
      String(options.listedMs),
      ...Object.entries(fields).flat(),
    );
    return { recorded: Number(recorded) === 1, jobId: String(id) };
  }

  async get(jobId: string): Promise<Record<string, string> | undefined> {
    const fields = await this.redis.hgetall(keys.erasureJob(jobId));
    return Object.keys(fields).length === 0 ? undefined : fields;
  }

  /** Progress fields, written only while the job exists (a done job past its retention stays gone). */
  async update(jobId: string, fields: Record<string, string>): Promise<void> {
    await this.redis.hsetExisting(keys.erasureJob(jobId), ...Object.entries(fields).flat());
  }

  async transition(jobId: string, to: Transition, options: { holder?: string; keepMs: number; fields?: Record<string, string> }): Promise<boolean> {
    const moved = await this.redis.erasureTransition(
      keys.erasureJob(jobId),
      keys.erasureStream(),
      keys.erasureStats(),
      keys.erasureUnmapped(),
      keys.erasureLease(jobId),
      to,
      ERASURE_GROUP,
      options.holder ?? '',
      String(options.keepMs),
      ...Object.entries(options.fields ?? {}).flat(),
    );
    return Number(moved) === 1;
  }

  async counts(): Promise<ErasureCounts> {
    const [requested, done, pending, failed, unmapped] = await this.redis.hmget(keys.erasureStats(), 'requested', 'done', 'pending', 'failed', 'unmapped');
    return { requested: Number(requested ?? 0), done: Number(done ?? 0), pending: Number(pending ?? 0), failed: Number(failed ?? 0), unmapped: Number(unmapped ?? 0) };
  }

  /** Job ids, newest first, `count` from the `offset`-th (a job recorded meanwhile moves the rest one place on). */
  listIds(offset: number, count: number): Promise<string[]> {
    return this.redis.zrevrange(keys.erasureIndex(), String(offset), String(offset + count - 1));
  }

  /** Jobs not done: those in the stream (pending, failed) and those waiting for a mapping. */
  async openIds(): Promise<string[]> {
    const entries = entriesOf(await this.redis.xrange(keys.erasureStream(), '-', '+'));
    const unmapped = await this.redis.zrange(keys.erasureUnmapped(), '0', '-1');
    return [...new Set([...entries.map((e) => e.jobId), ...unmapped])];
  }

  unmappedIds(): Promise<string[]> {
    return this.redis.zrange(keys.erasureUnmapped(), '0', '-1');
  }

  /** New entries for this worker (never delivered to any), without waiting. */
  async readNew(consumer: string, count: number): Promise<JobEntry[]> {
    const reply = (await this.redis.xreadgroup('GROUP', ERASURE_GROUP, consumer, 'COUNT', String(count), 'STREAMS', keys.erasureStream(), '>')) as
      | Array<[string, Array<[string, string[]]>]>
      | null;
    return entriesOf(reply?.[0]?.[1] ?? []);
  }

  /** Entries delivered to some worker and untouched for `idleMs`: taken over by this one. */
  async claimIdle(consumer: string, idleMs: number, count: number): Promise<JobEntry[]> {
    const out: JobEntry[] = [];
    let cursor = '0-0';
    do {
      const reply = (await this.redis.xautoclaim(keys.erasureStream(), ERASURE_GROUP, consumer, String(idleMs), cursor, 'COUNT', String(count))) as unknown as [string, unknown, string[]?];
      cursor = reply[0];
      out.push(...entriesOf(reply[1]));
    } while (cursor !== '0-0' && out.length < count);
    return out;
  }

  /** Removes an entry that names no job to run (gone, done, or requeued under another entry). */
  async dropEntry(entryId: string): Promise<void> {
    await this.redis.xack(keys.erasureStream(), ERASURE_GROUP, entryId);
    await this.redis.xdel(keys.erasureStream(), entryId);
  }

  /** Resets the entry's idle time, so no other worker takes it over while this one runs it. */
  async touch(consumer: string, entryId: string): Promise<void> {
    await this.redis.call('XCLAIM', keys.erasureStream(), ERASURE_GROUP, consumer, '0', entryId, 'JUSTID');
  }

  /** Takes the job's lease for `ms`; false when another worker holds it. */
  async lease(jobId: string, holder: string, ms: number): Promise<boolean> {
    return (await this.redis.set(keys.erasureLease(jobId), holder, 'PX', ms, 'NX')) === 'OK';
  }

  async renewLease(jobId: string, holder: string, ms: number): Promise<boolean> {
    return (await this.redis.erasureLease(keys.erasureLease(jobId), holder, 'renew', String(ms))) === 1;
  }

  async releaseLease(jobId: string, holder: string): Promise<void> {
    await this.redis.erasureLease(keys.erasureLease(jobId), holder, 'release', '0');
  }

  /** Workers that left nothing pending and have been idle `idleMs`: forgotten, so the group's list stays short. */
  async forgetIdleWorkers(idleMs: number): Promise<number> {
    const consumers = (await this.redis.xinfo('CONSUMERS', keys.erasureStream(), ERASURE_GROUP)) as Array<Array<string | number>>;
    let forgotten = 0;
    for (const consumer of consumers) {
      const info = Object.fromEntries(Array.from({ length: consumer.length / 2 }, (_, i) => [consumer[2 * i], consumer[2 * i + 1]]));
      if (Number(info['pending']) === 0 && Number(info['idle']) > idleMs) {
        await this.redis.xgroup('DELCONSUMER', keys.erasureStream(), ERASURE_GROUP, String(info['name']));
        forgotten++;
      }
    }
    return forgotten;
  }
}
