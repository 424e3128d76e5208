// The Redis keys of a board's periods at one instant, in the order the board scripts take them
// (lua/board-write.lua's header): a period's sorted set and member hash, and for a rolling
// period the previous period's pair too, which a write counts and a delete empties.
import { PERIODS, periodAt, periodTtlMs, previousPeriod, type Period, type PeriodWindow } from '../../domain/periods.js';
import { keys } from '../keys.js';

export interface PeriodKeys {
  readonly window: PeriodWindow;
  readonly scores: string;
  readonly members: string;
}

/** The keys of one period of a board: the one holding `nowMs`, or the one before it. */
export function periodKeys(workspaceId: string, board: string, period: Period, nowMs: number, previous = false): PeriodKeys {
  const window = previous && period !== 'all' ? previousPeriod(period, nowMs) : periodAt(period, nowMs);
  return {
    window,
    scores: keys.boardScores(workspaceId, board, window.id),
    members: keys.boardMembers(workspaceId, board, window.id),
  };
}

export interface WriteKeys {
  /** KEYS from the 4th on. */
  readonly keys: string[];
  /** ARGV[4]: the periods, space-separated. */
  readonly spec: string;
  /** ARGV[5]: ms each period's current keys live once created. */
  readonly ttls: string;
}

/** The period keys of a write to `periods` (in PERIODS order), or of a delete (every period). */
export function writeKeys(workspaceId: string, board: string, periods: readonly Period[], nowMs: number): WriteKeys {
  const out: string[] = [];
  const ttls: number[] = [];
  for (const period of periods) {
    const current = periodKeys(workspaceId, board, period, nowMs);
    out.push(current.scores, current.members);
    if (period === 'all') {
      ttls.push(0);
    } else {
      const previous = periodKeys(workspaceId, board, period, nowMs, true);
      out.push(previous.scores, previous.members);
      ttls.push(periodTtlMs(period, nowMs));
    }
  }
  return { keys: out, spec: periods.join(' '), ttls: ttls.join(' ') };
}

/** Every period key of a board that can exist at `nowMs`: all-time, and each rolling period's current and previous. */
export function everyPeriodKey(workspaceId: string, board: string, nowMs: number): string[] {
  return writeKeys(workspaceId, board, PERIODS, nowMs).keys;
}
