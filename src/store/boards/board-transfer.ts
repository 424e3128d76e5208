// A board's periods read for an export and written back by an import (admin/board-lines.ts).
// The export reads each period in pages after a cursor (lua/board-page.lua), so an entry that
// keeps its score while the export runs is in it once; the import writes entries in the
// export's order (lua/board-import.lua), which gives tied players their order again.
import { decodeCursor } from '../../domain/leaderboard.js';
import { periodAt, type Period, type PeriodWindow } from '../../domain/periods.js';
import { keys } from '../keys.js';
import type { RedisClient } from '../redis/redis.js';
import { decodeBoardImport, type ImportedChunk } from './board-protocol.js';
import type { LeaderboardStore } from './leaderboard-store.js';
import { periodKeys } from './period-keys.js';

/** Entries read from Redis, and written to it, in one call. */
export const TRANSFER_CHUNK = 1000;

export interface PeriodChunk {
  readonly period: Period;
  /** `all`, or the day, week or month (domain/periods.ts). */
  readonly id: string;
  /** user id, score as Redis prints it; best first. */
  readonly entries: Array<readonly [string, string]>;
}

/** Every entry of the periods a board keeps, current and previous, best first, a chunk at a time. */
export async function* readBoardPeriods(store: LeaderboardStore, workspaceId: string, board: string, periods: readonly Period[], nowMs: number): AsyncGenerator<PeriodChunk> {
  for (const period of periods) {
    for (const previous of period === 'all' ? [false] : [true, false]) {
      let after;
      do {
        const page = await store.page(workspaceId, board, { period, previous, order: 'desc', limit: TRANSFER_CHUNK, after }, nowMs);
        if (!page.kept || page.entries.length === 0) break;
        yield { period, id: page.window.id, entries: page.entries.map((e) => [e.userId, e.score] as const) };
        after = page.next === null ? undefined : decodeCursor(page.next);
      } while (after !== undefined);
    }
  }
}

/**
 * How long the keys of a period written now must live: until the end of the period after it,
 * as a write would have set them; 0 for all-time; negative when the period is over for good.
 */
export function importTtlMs(window: PeriodWindow, nowMs: number): number {
  if (window.period === 'all') return 0;
  return periodAt(window.period, window.endMs).endMs - nowMs;
}

/** Writes one chunk of a period's entries, in order, with the board's next sequence numbers. */
export async function writeBoardEntries(
  redis: RedisClient,
  workspaceId: string,
  board: string,
  window: PeriodWindow,
  entries: ReadonlyArray<readonly [string, string]>,
  maxEntries: number,
  nowMs: number,
): Promise<ImportedChunk> {
  const ttl = importTtlMs(window, nowMs);
  if (ttl < 0 || entries.length === 0) return { written: 0, entriesDelta: 0, full: false };
  const target = periodKeys(workspaceId, board, window.period, window.startMs);
  return decodeBoardImport(
    await redis.boardImport(keys.boardMeta(workspaceId, board), target.scores, target.members, String(Math.floor(ttl)), String(maxEntries), ...entries.flat()),
  );
}
