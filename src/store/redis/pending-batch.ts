// What the batched writers share (keys' last use, auth/last-used.ts; usage counts,
// usage-counter.ts; storage totals, storage-usage.ts; the players list, player-index.ts; the
// traffic overview, traffic-stats.ts): counts or notes gathered in memory on the hot path, in a
// map, and written to Redis by a flush on a timer and at stop, one flush at a time. A flush
// takes the whole map and leaves an empty one for what comes meanwhile; each writer writes what
// it took in its own way and, when that fails, puts back what it keeps for the next flush
// (into the map, merged with what came meanwhile).
import { singleFlight } from './single-flight.js';

export class PendingBatch<K, V> {
  private pending = new Map<K, V>();
  private timer: NodeJS.Timeout | undefined;
  /** Writes what is pending (see the constructor); a call during a flush shares it (single-flight.ts). */
  readonly flush: () => Promise<void>;

  /**
   * `write` is handed what was pending; with `writeEmpty`, it is called with nothing pending too
   * (a writer with a heartbeat), else such a flush does nothing.
   */
  constructor(write: (taken: Map<K, V>) => Promise<void>, options: { readonly writeEmpty?: boolean } = {}) {
    const writeEmpty = options.writeEmpty ?? false;
    this.flush = singleFlight(async () => {
      if (!writeEmpty && this.pending.size === 0) return;
      const taken = this.pending;
      this.pending = new Map();
      await write(taken);
    });
  }

  get(key: K): V | undefined {
    return this.pending.get(key);
  }

  set(key: K, value: V): void {
    this.pending.set(key, value);
  }

  /** The pending value of `key`, made by `create` (and kept) when there is none. */
  entry(key: K, create: () => V): V {
    let value = this.pending.get(key);
    if (value === undefined) this.pending.set(key, (value = create()));
    return value;
  }

  /** Keys pending. */
  get size(): number {
    return this.pending.size;
  }

  values(): IterableIterator<V> {
    return this.pending.values();
  }

  /**
   * Flushes every `intervalMs` on a timer that keeps no process alive (a failed flush is the
   * writer's to report; the timer goes on); `beforeEach` runs first on each tick. Once only.
   */
  start(intervalMs: number, beforeEach?: () => void): void {
    this.timer ??= setInterval(() => {
      beforeEach?.();
      void this.flush().catch(() => {});
    }, intervalMs).unref();
  }

  /** Stops the timer and flushes what is pending; rejects as that flush does. */
  async stop(): Promise<void> {
    clearInterval(this.timer);
    this.timer = undefined;
    await this.flush();
  }
}
