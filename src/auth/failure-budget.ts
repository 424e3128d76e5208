// Failed attempts at a credential that is not an API key (the platform webhook's signature),
// budgeted per caller address (an IPv6 /64) and minute on each instance, as failed key lookups
// are (authenticator.ts): past the budget the caller is answered 429 before anything is read or
// checked, so a caller sending made-up signatures spends its own time, not the service's, and
// fills no log.
//
// An attempt takes its place in the budget when it starts (take) and gives it back only once
// its credential proved good (refund): counted when it failed, 100 slow requests sent together
// all passed a budget of 30 while their bodies were on the way (issue 38).
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
  private retryAfter(caller: string, nowMs: number): number | undefined {
    const window = this.windows.get(caller);
    if (!window || nowMs - window.start >= WINDOW_MS || window.count < this.perMinute) return undefined;
    return Math.max(1, Math.ceil((window.start + WINDOW_MS - nowMs) / 1000));
  }

  /**
   * Takes one attempt from the caller's budget before anything of it is read: undefined when
   * taken (an attempt that proves good gives it back, refund), else the seconds to wait.
   */
  take(caller: string, nowMs: number): number | undefined {
    const wait = this.retryAfter(caller, nowMs);
    if (wait !== undefined) return wait;
    const window = this.windows.get(caller);
    if (!window || nowMs - window.start >= WINDOW_MS) this.windows.set(caller, { start: nowMs, count: 1 });
    else window.count++;
    return undefined;
  }

  /** Gives back the attempt taken at `takenAtMs` (its credential was good), if its window still runs. */
  refund(caller: string, takenAtMs: number): void {
    const window = this.windows.get(caller);
    if (window && window.start <= takenAtMs && takenAtMs - window.start < WINDOW_MS && window.count > 0) window.count--;
  }
}
