// How the periodic flushes (usage counts, keys' last use) write: one script call per workspace,
// with at most FLUSH_CONCURRENCY of them awaiting Redis at any time.
//
// Sent all at once, a flush of 2,000 workspaces was 4,000 script calls in one write every 5 s:
// Redis ran them back to back, and the service built and then resolved them in two long turns
// of its event loop. Every request in flight waited behind them: at 4 connections, answers of
// 36-134 ms fell at the flushes against a median of 0.35 ms (docs/performance.md, "Paced flushes"), and the
// stall grows with the number of workspaces an instance serves. Paced, a request's command waits behind at most
// FLUSH_CONCURRENCY flush calls (well under a millisecond of Redis time), and the flush itself
// takes a few round trips per FLUSH_CONCURRENCY workspaces, far inside its interval.
import pMap from 'p-map';

export const FLUSH_CONCURRENCY = 32;

/** Calls `write` for every item, at most FLUSH_CONCURRENCY at a time; rejects as p-map does. */
export function writePaced<T>(items: Iterable<T>, write: (item: T) => Promise<unknown>): Promise<unknown[]> {
  return pMap(items, write, { concurrency: FLUSH_CONCURRENCY });
}
