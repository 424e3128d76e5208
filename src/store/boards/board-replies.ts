// The board scripts' replies as values: a write's outcome (lua/board-write.lua), a page's and
// a rank's entries (lua/board-page.lua, lua/board-rank.lua), decoded once here and read by name.
import { userIdOfMember } from '../../domain/leaderboard.js';
import type { Period, PeriodWindow } from '../../domain/periods.js';
import { BoardScriptCode, unexpectedScriptReply } from '../redis/scripts.js';
import { parsePeriodsField } from './board-registry.js';

/** A write's reply, decoded; a replay is the first reply, with `replayed` set. */
export type BoardWriteReply =
  | {
      readonly status: 'scored';
      readonly changed: boolean;
      /** The player's score in each period written, as Redis reads it back (decimal text). */
      readonly scores: ReadonlyArray<readonly [Period, string]>;
      readonly entriesDelta: number;
      readonly replayed: boolean;
    }
  | { readonly status: 'deleted'; readonly deleted: boolean; readonly entriesDelta: number; readonly replayed: boolean }
  | { readonly status: 'refused'; readonly code: number; readonly period?: Period; readonly replayed: boolean };

export interface BoardEntry {
  /** 1-based, in the order asked, in the whole period. */
  readonly rank: number;
  readonly userId: string;
  /** As Redis prints it: reads back as the exact double. */
  readonly score: string;
}

export type PageResult =
  | { readonly kept: true; readonly window: PeriodWindow; readonly entries: BoardEntry[]; readonly next: string | null }
  | { readonly kept: false; readonly periods: Period[] };

export type RankResult =
  | { readonly kept: true; readonly found: false; readonly window: PeriodWindow }
  | {
      readonly kept: true;
      readonly found: true;
      readonly window: PeriodWindow;
      readonly rank: number;
      readonly score: string;
      /** The entries around the player (the player among them), when asked for. */
      readonly entries: BoardEntry[];
    }
  | { readonly kept: false; readonly periods: Period[] };

export function entriesOf(pairs: ReadonlyArray<string | number>, from: number, firstRank: number): BoardEntry[] {
  const out: BoardEntry[] = [];
  for (let i = from; i + 1 < pairs.length; i += 2) {
    out.push({ rank: firstRank + out.length + 1, userId: userIdOfMember(String(pairs[i])), score: String(pairs[i + 1]) });
  }
  return out;
}

export function decodeWrite(raw: ReadonlyArray<string | number>, op: 's' | 'i' | 'd' | 'e' | 'f', replayed: boolean): BoardWriteReply {
  const status = Number(raw[0]);
  if (status === 1) {
    if (op === 'd' || op === 'e' || raw.length === 3) {
      return { status: 'deleted', deleted: Number(raw[1]) === 1, entriesDelta: Number(raw[2]), replayed };
    }
    const periods = parsePeriodsField(String(raw[3]));
    return {
      status: 'scored',
      changed: Number(raw[1]) === 1,
      scores: periods.map((p, i) => [p, String(raw[4 + i])] as const),
      entriesDelta: Number(raw[2]),
      replayed,
    };
  }
  if (status === BoardScriptCode.BOARD_FULL || status === BoardScriptCode.NUMBER_OUT_OF_RANGE) {
    return { status: 'refused', code: status, period: raw[1] as Period, replayed };
  }
  if (status === BoardScriptCode.IDEMPOTENCY_KEY_REUSED) return { status: 'refused', code: status, replayed };
  throw unexpectedScriptReply(raw);
}
