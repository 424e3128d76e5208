// Failed attempts at a credential that is not an API key (the platform webhook's signature),
// budgeted per caller address (an IPv6 /64) and minute on each instance, as failed key lookups
// are (authenticator.ts): past the budget the caller is answered 429 before anything is read or
// checked, so a caller sending made-up signatures spends its own time, not the service's, and
// fills no log.
import { LRUCache } from 'lru-cache';

const WINDOW_MS = 60_000;
/** Addresses tracked at once; the least recently seen are forgotten beyond. */
const TRACKED_ADDRESSES = 100_000;

interface Window {
  start: number;
  count: number;
}

export class FailureBudget {
  private readonly windows = new LRUCache<string, Window>({ max: TRACKED_ADDRESSES });

  constructor(private readonly perMinute: number) {}

  /** Seconds until the caller may try again, or undefined while its budget lasts. */
  retryAfter(caller: string, nowMs: number): number | undefined {
    const window = this.windows.get(caller);
    if (!window || nowMs - window.start >= WINDOW_MS || window.count < this.perMinute) return undefined;
    return Math.max(1, Math.ceil((window.start + WINDOW_MS - nowMs) / 1000));
  }

  /** Counts one failure of the caller's. */
  fail(caller: string, nowMs: number): void {
    const window = this.windows.get(caller);
    if (!window || nowMs - window.start >= WINDOW_MS) this.windows.set(caller, { start: nowMs, count: 1 });
    else window.count++;
  }
}
