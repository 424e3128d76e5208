// The background side of erasure, on every instance (and in the CLI for a job it has just
// recorded): takes jobs from the stream's consumer group, one at a time, and runs each under a
// lease. A job whose worker died (its entry idle for ERASURE_CLAIM_IDLE_MS, its lease expired)
// is taken over by any worker through XAUTOCLAIM and finished; a failed attempt is retried with
// a growing wait, for as long as it takes. Polls every POLL_MS rather than blocking on the
// stream, so it shares the service's connection and its command timeout.
import { hostname } from 'node:os';
import { randomBytes } from 'node:crypto';
import type { ErasureConfig } from '../config.js';
import { keyCheckDigest } from '../domain/erasure.js';
import type { Logger } from '../logger.js';
import type { AuditLogStore } from '../store/installation/audit-log.js';
import { ErasureJobStore, type ErasureCounts, type JobEntry } from '../store/installation/erasure-jobs.js';
import { GameMap } from '../store/installation/game-map.js';
import { TombstoneStore } from '../store/installation/tombstones.js';
import { workspaceIds } from '../store/installation/installation-records.js';
import { ErasurePlayerNames } from '../store/workspaces/erasure-names.js';
import { markRewriteDue, rewriteIfDue } from '../store/redis/persistence-rewrite.js';
import type { RedisClient } from '../store/redis/redis.js';
import { failoverLogOf } from '../store/redis/failover-log.js';
import { eraseUser } from './eraser.js';
import { decodeJob, progressFields, type ErasureJob, type ErasureProgress } from './job-record.js';
import type { PlayerPlace } from './places.js';

export const POLL_MS = 1000;
/** Jobs taken from the stream per poll; run one after another. */
const BATCH = 10;
/** The longest wait before a failed job's next attempt. */
const MAX_BACKOFF_MS = 15 * 60_000;
/** Workers gone this long with nothing pending are dropped from the consumer group. */
const FORGET_WORKERS_MS = 24 * 3_600_000;
const HOUSEKEEPING_EVERY_MS = 10 * 60_000;
/** How long a stopping worker waits for the job in hand. */
const STOP_WAIT_MS = 5000;

export type RunOutcome = 'done' | 'unmapped' | 'failed' | 'busy' | 'not-due' | 'gone';

export interface WorkerObserver {
  /** A job done, an attempt failed, or the installation's counts read. */
  done?(): void;
  failed?(): void;
  counts?(counts: ErasureCounts): void;
}

export interface ErasureWorkerDeps {
  readonly redis: RedisClient;
  readonly config: ErasureConfig;
  readonly secret: string;
  readonly logger: Logger;
  readonly places: readonly PlayerPlace[];
  readonly audit: AuditLogStore;
  readonly observer?: WorkerObserver;
  readonly nowMs?: () => number;
}

export class ErasureWorker {
  /** This worker's name in the consumer group: a new one per process, so a restart never takes over a dead worker's entries before they are idle. */
  readonly consumer = `${hostname()}-${process.pid}-${randomBytes(3).toString('hex')}`;
  private readonly jobs: ErasureJobStore;
  private readonly tombstones: TombstoneStore;
  private readonly nowMs: () => number;
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<void> | undefined;
  private stopped = true;
  private groupReady = false;
  private lastHousekeeping = 0;
  private keyMismatchLogged = 0;

  constructor(private readonly deps: ErasureWorkerDeps) {
    this.jobs = new ErasureJobStore(deps.redis);
    this.tombstones = new TombstoneStore(deps.redis);
    this.nowMs = deps.nowMs ?? Date.now;
  }

  /** Starts polling; never fails (a Redis that does not answer is retried at the next poll). */
  start(): void {
    this.stopped = false;
    this.schedule(0);
  }

  /**
   * Stops polling and waits up to `waitMs` for the job in hand: a long job (a large keyspace to
   * walk) must not hold up a shutdown, and one left unfinished is taken over by another worker
   * once its lease and entry have been idle ERASURE_CLAIM_IDLE_MS.
   */
  async stop(waitMs = STOP_WAIT_MS): Promise<void> {
    this.stopped = true;
    clearTimeout(this.timer);
    if (this.running === undefined) return;
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([this.running, new Promise<void>((resolve) => (timer = setTimeout(resolve, waitMs)))]);
    clearTimeout(timer);
  }

  /** Polls now: a job was just recorded by this process. */
  wake(): void {
    if (!this.stopped && this.running === undefined) this.schedule(0);
  }

  private schedule(ms: number): void {
    clearTimeout(this.timer);
    this.timer = setTimeout(() => {
      this.running = this.poll()
        .catch((err: unknown) => {
          if (/NOGROUP/.test((err as Error).message)) this.groupReady = false;
          if (!failoverLogOf(this.deps.logger).note(err, {}, 'erasure worker: poll failed')) {
            this.deps.logger.warn({ err: (err as Error).message }, 'erasure worker: poll failed');
          }
        })
        .finally(() => {
          this.running = undefined;
          if (!this.stopped) this.schedule(POLL_MS);
        });
    }, ms);
    this.timer.unref();
  }

  private async poll(): Promise<void> {
    if (!(await this.keyMatches())) return;
    // Made once per worker, and again after a NOGROUP (a stream deleted by hand).
    if (!this.groupReady) {
      await this.jobs.ensureGroup();
      this.groupReady = true;
    }
    const idle = await this.jobs.claimIdle(this.consumer, this.deps.config.claimIdleMs, BATCH);
    const fresh = await this.jobs.readNew(this.consumer, BATCH);
    for (const entry of [...idle, ...fresh]) {
      if (this.stopped) break;
      await this.runEntry(entry);
    }
    this.deps.observer?.counts?.(await this.jobs.counts());
    if (this.deps.config.aofRewriteMs > 0) await this.rewriteIfDue();
    if (this.nowMs() - this.lastHousekeeping > HOUSEKEEPING_EVERY_MS) {
      this.lastHousekeeping = this.nowMs();
      await this.jobs.forgetIdleWorkers(FORGET_WORKERS_MS);
    }
  }

  /** Rewrites every node's AOF (or saves its RDB) when an erasure finished since the last rewrite, at most once per ERASURE_AOF_REWRITE_HOURS. */
  private async rewriteIfDue(): Promise<void> {
    const result = await rewriteIfDue(this.deps.redis, this.deps.config.aofRewriteMs);
    if (result.started.length > 0 || result.failed.length > 0) {
      const log = result.failed.length > 0 ? this.deps.logger.warn.bind(this.deps.logger) : this.deps.logger.info.bind(this.deps.logger);
      log(result, 'erasure: rewrites of the Redis persistence files started, so erased data leaves them');
    }
  }

  /** A worker with another secret than the installation's would write tombstones nobody finds: it waits, and says so. */
  private async keyMatches(): Promise<boolean> {
    if (await this.tombstones.keyCheckMatches(keyCheckDigest(this.deps.secret), false)) return true;
    if (this.nowMs() - this.keyMismatchLogged > 60_000) {
      this.keyMismatchLogged = this.nowMs();
      this.deps.logger.error('erasure worker idle: ERASURE_DIGEST_SECRET is not the installation\'s (docs/erasure.md); erasures wait for an instance with the right one');
    }
    return false;
  }

  private async runEntry(entry: JobEntry): Promise<void> {
    const fields = await this.jobs.get(entry.jobId);
    if (!fields || fields['entry'] !== entry.entryId) {
      // A job gone, done, or requeued under a new entry: this entry is a leftover.
      await this.jobs.dropEntry(entry.entryId);
      return;
    }
    await this.runJob(entry.jobId);
  }

  /** Runs one job now if its lease is free and it is due: what the CLI calls for a job it has just recorded. */
  async runJob(jobId: string): Promise<RunOutcome> {
    const fields = await this.jobs.get(jobId);
    if (!fields) return 'gone';
    const job = decodeJob(fields);
    if (job.state === 'done' || job.state === 'unmapped' || job.userId === undefined) return 'gone';
    if (job.nextAttemptAtMs > this.nowMs()) return 'not-due';
    const leaseMs = this.deps.config.claimIdleMs;
    if (!(await this.jobs.lease(jobId, this.consumer, leaseMs))) return 'busy';
    const heartbeat = setInterval(() => {
      void this.jobs.renewLease(jobId, this.consumer, leaseMs).catch(() => undefined);
      void this.jobs.touch(this.consumer, job.entry).catch(() => undefined);
    }, Math.max(100, Math.floor(leaseMs / 3)));
    heartbeat.unref();
    try {
      return await this.attempt(job);
    } finally {
      clearInterval(heartbeat);
    }
  }

  private async attempt(job: ErasureJob): Promise<RunOutcome> {
    const attempts = job.attempts + 1;
    const keepMs = this.deps.config.tombstoneMs;
    try {
      const { workspaceIds: targets, unknown } = await this.resolve(job);
      await this.jobs.update(job.jobId, { attempts: String(attempts), startedAtMs: String(this.nowMs()), workspaces: JSON.stringify(targets) });
      const progress = (p: Partial<ErasureProgress>) => this.jobs.update(job.jobId, progressFields(p));
      // The players named after the user in each workspace (its erasure player names), read at
      // each attempt: nothing of them is kept in the job, which holds no more of the user than its id.
      const alsoNamed = await new ErasurePlayerNames(this.deps.redis).namesIn(targets, job.userId!);
      const erased = await eraseUser(
        { redis: this.deps.redis, tombstones: this.tombstones, places: this.deps.places, audit: this.deps.audit, secret: this.deps.secret, tombstoneMs: keepMs, nowMs: this.nowMs },
        job.userId!,
        targets,
        progress,
        alsoNamed,
      );
      for (const workspaceId of targets) {
        await this.deps.audit.append({
          at: new Date(this.nowMs()).toISOString(),
          actor: 'erasure-worker',
          action: 'player.erase',
          target: `erasure:${job.jobId}`,
          workspaceId,
          details: { user: job.user, keysDeleted: erased.keysByWorkspace[workspaceId] ?? 0, requestedBy: job.requestedBy, source: job.source },
        });
      }
      const to = unknown.length > 0 ? 'unmapped' : 'done';
      await this.jobs.transition(job.jobId, to, {
        holder: this.consumer,
        keepMs,
        fields: { phase: 'finished', unmappedGames: JSON.stringify(unknown), lastError: '', ...(to === 'done' ? { doneAtMs: String(this.nowMs()) } : {}) },
      });
      if (this.deps.config.aofRewriteMs > 0 && targets.length > 0) await markRewriteDue(this.deps.redis);
      this.deps.observer?.done?.();
      return to;
    } catch (err) {
      const message = (err as Error).message.slice(0, 500);
      const waitMs = Math.min(this.deps.config.claimIdleMs * 2 ** (attempts - 1), MAX_BACKOFF_MS);
      this.deps.logger.warn({ jobId: job.jobId, attempts, err: message, retryInMs: waitMs }, 'erasure attempt failed; it will be retried');
      this.deps.observer?.failed?.();
      await this.jobs
        .transition(job.jobId, 'failed', {
          holder: this.consumer,
          keepMs,
          fields: { attempts: String(attempts), lastError: message, nextAttemptAt: String(this.nowMs() + waitMs) },
        })
        .catch(() => this.jobs.releaseLease(job.jobId, this.consumer).catch(() => undefined));
      return 'failed';
    }
  }

  /** The workspaces the job erases in now: its own, every one, or those serving its games. */
  private async resolve(job: ErasureJob): Promise<{ workspaceIds: string[]; unknown: string[] }> {
    const scope = job.rawScope;
    if (scope.kind === 'workspace') return { workspaceIds: [scope.workspaceId], unknown: [] };
    if (scope.kind === 'all-workspaces') return { workspaceIds: await workspaceIds(this.deps.redis), unknown: [] };
    return new GameMap(this.deps.redis).resolve(scope.gameIds);
  }
}
