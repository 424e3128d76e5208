// Remembers, in memory, when each API key was last used, and writes that to Redis in one
// batch every few seconds, so recording it adds no round trip to any request. The hot path
// costs one Map lookup and, for a key's first request in an interval, one small object.
// Losing an unflushed interval (a crash) loses only "last used" precision, never data.
import type { Logger } from '../logger.js';
import type { KeyUsageStore } from '../store/workspaces/key-usage.js';
import { PendingBatch } from '../store/redis/pending-batch.js';
import { failoverLogOf } from '../store/redis/failover-log.js';

interface PendingUse {
  readonly workspaceId: string;
  at: number;
}

export class LastUsedRecorder {
  /** Key id -> its latest use since the last flush. */
  private readonly pending = new PendingBatch<string, PendingUse>((taken) => this.write(taken));

  constructor(
    private readonly store: KeyUsageStore,
    private readonly logger: Logger,
  ) {}

  /** Called on every authenticated request. */
  touch(keyId: string, workspaceId: string, at: number): void {
    const seen = this.pending.get(keyId);
    if (seen === undefined) this.pending.set(keyId, { workspaceId, at });
    else if (at > seen.at) seen.at = at;
  }

  /** How many keys wait for the next flush. */
  get size(): number {
    return this.pending.size;
  }

  /** Writes what was recorded since the last flush; on failure keeps it for the next one. */
  readonly flush = this.pending.flush;

  private async write(taken: Map<string, PendingUse>): Promise<void> {
    const batch = new Map<string, string[]>();
    for (const [keyId, use] of taken) {
      let pairs = batch.get(use.workspaceId);
      if (!pairs) batch.set(use.workspaceId, (pairs = []));
      pairs.push(keyId, String(use.at));
    }
    try {
      await this.store.record(batch);
    } catch (err) {
      if (!failoverLogOf(this.logger).note(err, { keys: taken.size }, 'API key last use not recorded; retrying later')) {
        this.logger.warn({ err: (err as Error).message, keys: taken.size }, 'could not record API key last use; retrying later');
      }
      for (const [keyId, use] of taken) this.touch(keyId, use.workspaceId, use.at);
    }
  }

  start(intervalMs: number): void {
    this.pending.start(intervalMs);
  }

  /** Stops the timer and writes what is left. */
  async stop(): Promise<void> {
    await this.pending.stop();
    // A flush already under way when we were called did not see the latest uses.
    if (this.pending.size > 0) await this.flush();
  }
}
