// The one place that knows the leaderboard scripts' arguments and replies (lua/board-write.lua,
// lua/board-page.lua, lua/board-rank.lua; the replies of lua/board-register.lua and
// lua/board-import.lua): each reply is decoded here, once, into a typed value that callers read
// by name, a refusal as its error code. A replayed write (an Idempotency-Key's first answer,
// kept by the script as JSON) is decoded by the same code as a live one, so a replay answers
// exactly what the first did.
import { encodeCursor, userIdOfMember, type Cursor, type Order } from '../../domain/leaderboard.js';
import { PERIODS, isPeriod, type Period, type PeriodWindow } from '../../domain/periods.js';
import { ErrorCode } from '../../errors.js';
import { ScriptCode, unexpectedScriptReply, unwrapReplay } from '../redis/scripts.js';
import type { WriteKeys } from './period-keys.js';

export type RawReply = ReadonlyArray<string | number>;

/** The codes the leaderboard scripts return, named once; each script's header lists its own. */
const BoardCode = {
  APPLIED: 1,
  /** board-write.lua: the board is not in its workspace's registry yet; register, then write again. Not recorded. */
  UNREGISTERED: -1,
  /** board-write.lua: the board keeps other periods than the caller passed; send again with them. Not recorded. */
  PERIODS_CHANGED: -2,
  /** board-page.lua, board-rank.lua: nothing found, and the board does not keep the period asked for. */
  PERIOD_NOT_KEPT: -2,
  /** board-write.lua, board-import.lua: a new entry past the most entries of a period. */
  BOARD_FULL: -3,
  /** board-write.lua: an increment's result is not a finite number. */
  NUMBER_OUT_OF_RANGE: -4,
  /** board-write.lua: the players' code, as the shared prologue (lua/includes/idempotency.lua) returns it. */
  IDEMPOTENCY_KEY_REUSED: ScriptCode.IDEMPOTENCY_KEY_REUSED,
  /** board-rank.lua: the player is not on the period. */
  NOT_FOUND: 0,
  /** board-register.lua: the workspace has its most boards. */
  TOO_MANY_BOARDS: -1,
  /** board-register.lua: registered by this call (1: it was registered already). */
  REGISTERED_NOW: 2,
} as const;

/** Periods in one order, once each: the form the board's meta `p` holds and the write script compares. */
export function canonicalPeriods(periods: readonly Period[]): Period[] {
  return PERIODS.filter((p) => periods.includes(p));
}

/** The meta's `p`: the periods, space-separated, in PERIODS order (ARGV[4] of a write). */
export function periodsField(periods: readonly Period[]): string {
  return canonicalPeriods(periods).join(' ');
}

export function parsePeriodsField(field: string): Period[] {
  return canonicalPeriods(field.split(' ').filter(isPeriod));
}

/** Why a board write was refused, with what the refusal's answer names. Nothing was written. */
export type BoardRefusal =
  | { readonly code: typeof ErrorCode.BOARD_FULL | typeof ErrorCode.NUMBER_OUT_OF_RANGE; readonly period: Period }
  | { readonly code: typeof ErrorCode.IDEMPOTENCY_KEY_REUSED };

// ---------------------------------------------------------------------------------------------
// lua/board-write.lua

/** ARGV[1] of lua/board-write.lua: set, increment, delete, erase, follow. */
export type BoardWriteOp = 's' | 'i' | 'd' | 'e' | 'f';

export interface BoardLimits {
  readonly maxEntries: number;
  readonly idempotencyTtlSeconds: number;
}

/** ARGV[6] of every write, `<most entries> <idempotency seconds>`: the same for every write, so built once. */
export function boardLimitsArg(limits: BoardLimits): string {
  return `${limits.maxEntries} ${limits.idempotencyTtlSeconds}`;
}

/** ARGV of lua/board-write.lua (its header describes each). */
export function boardWriteArgs(op: BoardWriteOp, userId: string, arg: string, period: WriteKeys, limitsArg: string, fingerprint: string, version: string): string[] {
  return [op, userId, arg, period.spec, period.ttls, limitsArg, fingerprint, version];
}

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
  | { readonly status: 'refused'; readonly refusal: BoardRefusal; readonly replayed: boolean };

/** A write's reply, or what the caller must do before it sends the write again (nothing was written). */
export type BoardWriteAnswer =
  | BoardWriteReply
  | { readonly status: 'unregistered' }
  /** `periods`: the meta's `p` as the board keeps it now, to be sent with the write. */
  | { readonly status: 'periods-changed'; readonly periods: string };

/**
 * lua/board-write.lua's reply: `{ 1, changed, entriesDelta, periods, score1, ... }` for a set,
 * increment or follow, `{ 1, deleted, entriesDelta }` for a delete, an erase (and a follow
 * that deleted or was ignored), `{ 2, '<first answer>' }` for a replay, or a negative code.
 */
export function decodeBoardWrite(raw: RawReply, op: BoardWriteOp): BoardWriteAnswer {
  const { reply, replayed } = unwrapReplay(raw);
  const status = Number(reply[0]);
  if (status === BoardCode.APPLIED) {
    if (op === 'd' || op === 'e' || reply.length === 3) {
      return { status: 'deleted', deleted: Number(reply[1]) === 1, entriesDelta: Number(reply[2]), replayed };
    }
    const periods = parsePeriodsField(String(reply[3]));
    return {
      status: 'scored',
      changed: Number(reply[1]) === 1,
      scores: periods.map((p, i) => [p, String(reply[4 + i])] as const),
      entriesDelta: Number(reply[2]),
      replayed,
    };
  }
  // Never kept under a key, so never in a replay.
  if (!replayed && status === BoardCode.UNREGISTERED) return { status: 'unregistered' };
  if (!replayed && status === BoardCode.PERIODS_CHANGED) return { status: 'periods-changed', periods: String(reply[1]) };
  if (status === BoardCode.BOARD_FULL) return { status: 'refused', refusal: { code: ErrorCode.BOARD_FULL, period: reply[1] as Period }, replayed };
  if (status === BoardCode.NUMBER_OUT_OF_RANGE) {
    return { status: 'refused', refusal: { code: ErrorCode.NUMBER_OUT_OF_RANGE, period: reply[1] as Period }, replayed };
  }
  if (status === BoardCode.IDEMPOTENCY_KEY_REUSED) return { status: 'refused', refusal: { code: ErrorCode.IDEMPOTENCY_KEY_REUSED }, replayed };
  throw unexpectedScriptReply(reply);
}

// ---------------------------------------------------------------------------------------------
// lua/board-page.lua and lua/board-rank.lua

export interface BoardEntry {
  /** 1-based, in the order asked, in the whole period. */
  readonly rank: number;
  readonly userId: string;
  /** As Redis prints it: reads back as the exact double. */
  readonly score: string;
}

/** Sorted-set members and scores, alternating from `from`, as entries ranked from `firstRank` + 1. */
export function entriesOf(pairs: ReadonlyArray<string | number>, from: number, firstRank: number): BoardEntry[] {
  const out: BoardEntry[] = [];
  for (let i = from; i + 1 < pairs.length; i += 2) {
    out.push({ rank: firstRank + out.length + 1, userId: userIdOfMember(String(pairs[i])), score: String(pairs[i + 1]) });
  }
  return out;
}

export interface PageQuery {
  readonly period: Period;
  readonly previous: boolean;
  readonly order: Order;
  /** 1-100. */
  readonly limit: number;
  readonly after?: Cursor | undefined;
  readonly min?: number | undefined;
  readonly max?: number | undefined;
}

export type PageResult =
  | { readonly kept: true; readonly window: PeriodWindow; readonly entries: BoardEntry[]; readonly next: string | null }
  | { readonly kept: false; readonly periods: Period[] };

/** ARGV of lua/board-page.lua (its header describes each). */
export function boardPageArgs(query: PageQuery): string[] {
  return [
    query.period,
    query.order === 'desc' ? 'd' : 'a',
    String(query.limit),
    query.after?.score ?? '',
    query.after?.member ?? '',
    query.min === undefined ? '-inf' : String(query.min),
    query.max === undefined ? '+inf' : String(query.max),
  ];
}

/**
 * lua/board-page.lua's reply: `{ 1, firstRank, more, member1, score1, ... }` or `{ -2, periods }`;
 * the cursor of the next page, when one follows, is the page's last entry.
 */
export function decodeBoardPage(raw: RawReply, order: Order, window: PeriodWindow): PageResult {
  if (raw[0] === BoardCode.PERIOD_NOT_KEPT) return { kept: false, periods: parsePeriodsField(String(raw[1])) };
  if (raw[0] !== BoardCode.APPLIED) throw unexpectedScriptReply(raw);
  const entries = entriesOf(raw, 3, Number(raw[1]));
  let next: string | null = null;
  if (Number(raw[2]) === 1 && raw.length >= 5) {
    next = encodeCursor({ order, member: String(raw[raw.length - 2]), score: String(raw[raw.length - 1]) });
  }
  return { kept: true, window, entries, next };
}

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

/** ARGV of lua/board-rank.lua (its header describes each). */
export function boardRankArgs(period: Period, order: Order, userId: string, around: number): string[] {
  return [period, order === 'desc' ? 'd' : 'a', userId, String(around)];
}

/** lua/board-rank.lua's reply: `{ 1, rank, score, firstRank, member1, score1, ... }`, `{ 0 }` or `{ -2, periods }`. */
export function decodeBoardRank(raw: RawReply, window: PeriodWindow): RankResult {
  if (raw[0] === BoardCode.PERIOD_NOT_KEPT) return { kept: false, periods: parsePeriodsField(String(raw[1])) };
  if (raw[0] === BoardCode.NOT_FOUND) return { kept: true, found: false, window };
  if (raw[0] !== BoardCode.APPLIED) throw unexpectedScriptReply(raw);
  const entries = raw.length > 3 ? entriesOf(raw, 4, Number(raw[3])) : [];
  return { kept: true, found: true, window, rank: Number(raw[1]) + 1, score: String(raw[2]), entries };
}

// ---------------------------------------------------------------------------------------------
// lua/board-register.lua

export type RegisterReply =
  | { readonly ok: true; readonly created: boolean; readonly configJson: string }
  | { readonly ok: false; readonly boards: number };

/** lua/board-register.lua's reply: `{ 1 | 2, config }` (2: registered now) or `{ -1, count }`. */
export function decodeBoardRegister(raw: readonly [number, string | number]): RegisterReply {
  const [status, reply] = raw;
  if (status === BoardCode.TOO_MANY_BOARDS) return { ok: false, boards: Number(reply) };
  if (status !== BoardCode.APPLIED && status !== BoardCode.REGISTERED_NOW) throw unexpectedScriptReply(raw);
  return { ok: true, created: status === BoardCode.REGISTERED_NOW, configJson: String(reply) };
}

// ---------------------------------------------------------------------------------------------
// lua/board-import.lua

export interface ImportedChunk {
  readonly written: number;
  /** The change of the board's entries counted into storage. */
  readonly entriesDelta: number;
  /** The period reached the most entries: `written` were loaded before it. */
  readonly full: boolean;
}

/** lua/board-import.lua's reply: `{ written, entriesDelta }` or `{ -3, written, entriesDelta }` (BOARD_FULL). */
export function decodeBoardImport(raw: readonly [number, number, number?]): ImportedChunk {
  const [first, second, third] = raw;
  if (first === BoardCode.BOARD_FULL) return { written: second, entriesDelta: third ?? 0, full: true };
  return { written: first, entriesDelta: second, full: false };
}
