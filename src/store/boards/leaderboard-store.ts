// Reads and writes leaderboards: one sorted set and member hash per board and period, in the
// board's own slot (keys.ts), written by lua/board-write.lua and read by lua/board-page.lua and
// lua/board-rank.lua, one script call each (a first page without a cursor or score range is
// one ZRANGE instead). The scripts' arguments and replies are board-protocol.ts's; this module
// picks the keys, sends the calls and acts on what a reply asks. A write's script sent and not
// answered in time (a timeout, a connection dropped after it left) may have been applied:
// OUTCOME_UNKNOWN, as for player writes, never STORAGE_UNAVAILABLE.
//
// A write passes the keys of the periods the board keeps. Which those are is the registry's
// (board-registry.ts), copied into the board's meta, which the script checks: this instance
// remembers each board's periods, and a write sent with stale ones is refused unapplied and
// sent again with the board's (one more round trip, after an operator's change or a restart).
// A board's first write registers it first, within the workspace's most boards. Erasure and
// reset go through here too: a player off every board, a board emptied or dropped.
import { LRUCache } from 'lru-cache';
import { encodeCursor } from '../../domain/leaderboard.js';
import { PERIODS, type Period } from '../../domain/periods.js';
import { AppError, ErrorCode } from '../../errors.js';
import { keys } from '../keys.js';
import { noteKeptElsewhere } from '../players/kept-elsewhere.js';
import { changing, type RedisClient } from '../redis/redis.js';
import {
  boardLimitsArg,
  boardPageArgs,
  boardRankArgs,
  boardWriteArgs,
  decodeBoardPage,
  decodeBoardRank,
  decodeBoardWrite,
  entriesOf,
  parsePeriodsField,
  periodsField,
  type BoardLimits,
  type BoardWriteOp,
  type BoardWriteReply,
  type PageQuery,
  type PageResult,
  type RankResult,
} from './board-protocol.js';
import { BoardRegistry, DEFAULT_PERIODS } from './board-registry.js';
import { everyPeriodKey, periodKeys, writeKeys, type PeriodKeys } from './period-keys.js';

export type { BoardEntry, BoardLimits, BoardRefusal, BoardWriteReply, PageQuery, PageResult, RankResult } from './board-protocol.js';

export type BoardOp =
  | { readonly op: 'set'; readonly score: number }
  | { readonly op: 'increment'; readonly amount: number }
  | { readonly op: 'delete' };

export interface BoardWriteContext {
  readonly nowMs: number;
  /** The request's idempotency key (its SHA-256) and fingerprint, when it has one. */
  readonly idempotency?: { readonly keyHash: string; readonly fingerprint: string } | undefined;
}

/** Boards whose periods this instance remembers (each a name and a short string). */
const KNOWN_BOARDS = 100_000;
/** Tries of a write whose board's periods changed under it: more means an operator is flipping them. */
const WRITE_TRIES = 4;

const OP_CODE = { set: 's', increment: 'i', delete: 'd' } as const;

export class LeaderboardStore {
  private readonly known = new LRUCache<string, string>({ max: KNOWN_BOARDS });
  /** `<most entries> <idempotency seconds>`: ARGV[6] of every write. */
  private readonly limitsArg: string;

  constructor(
    private readonly redis: RedisClient,
    readonly registry: BoardRegistry,
    readonly limits: BoardLimits,
  ) {
    this.limitsArg = boardLimitsArg(limits);
  }

  /**
   * One write of the public API: set, increment or delete of one player's score. Under an
   * idempotency key its answer, kept in the board's slot, is noted in the player's first, so
   * that an erasure of the player deletes it (players/kept-elsewhere.ts).
   */
  async write(workspaceId: string, board: string, userId: string, op: BoardOp, context: BoardWriteContext): Promise<BoardWriteReply> {
    const arg = op.op === 'set' ? String(op.score) : op.op === 'increment' ? String(op.amount) : '';
    if (context.idempotency) {
      const record = { board, keyHash: context.idempotency.keyHash };
      await noteKeptElsewhere(this.redis, workspaceId, [userId], record, context.nowMs + this.limits.idempotencyTtlSeconds * 1000, context.nowMs);
    }
    return this.run(workspaceId, board, userId, OP_CODE[op.op], arg, '', context);
  }

  /**
   * Sets a player's score on a board that follows a player key to the value stored there
   * (`valueJson`, or null once the key is gone), when `version` (the player's version that
   * stored it) is newer than the one last applied: so the write path may call it more than
   * once and in any order. A value that is not a finite number takes the player off the board.
   */
  applyFollowed(workspaceId: string, board: string, userId: string, valueJson: string | null, version: number, nowMs: number): Promise<BoardWriteReply> {
    let score = '';
    if (valueJson !== null) {
      const value = JSON.parse(valueJson) as unknown;
      if (typeof value === 'number' && Number.isFinite(value)) score = String(value);
    }
    return this.run(workspaceId, board, userId, 'f', score, String(version), { nowMs });
  }

  /**
   * Takes a player off every period of every board of the workspace (erasure): every period
   * that can still exist, whatever the board keeps now. Returns the boards the player was on
   * and the change of the entries counted into storage.
   */
  async removePlayer(workspaceId: string, userId: string, nowMs: number): Promise<{ boards: number; entriesDelta: number }> {
    const boards = await this.registry.list(workspaceId);
    let onBoards = 0;
    let entriesDelta = 0;
    for (const { board } of boards) {
      const reply = await this.run(workspaceId, board, userId, 'e', '', '', { nowMs });
      if (reply.status === 'deleted') {
        if (reply.deleted) onBoards++;
        entriesDelta += reply.entriesDelta;
      }
    }
    return { boards: onBoards, entriesDelta };
  }

  private async run(
    workspaceId: string,
    board: string,
    userId: string,
    op: BoardWriteOp,
    arg: string,
    version: string,
    context: BoardWriteContext,
  ): Promise<BoardWriteReply> {
    const cacheKey = `${workspaceId}\n${board}`;
    const idempotency = context.idempotency;
    const fixed = [
      keys.boardMeta(workspaceId, board),
      keys.boardIdempotency(workspaceId, board, idempotency?.keyHash ?? '-'),
      keys.boardFollowed(workspaceId, board),
    ];
    for (let attempt = 0; attempt < WRITE_TRIES; attempt++) {
      const removal = op === 'd' || op === 'e';
      const periods = removal ? PERIODS : parsePeriodsField(this.known.get(cacheKey) ?? periodsField(DEFAULT_PERIODS));
      const period = writeKeys(workspaceId, board, periods, context.nowMs);
      // Sent and not answered in time, it may have been applied: OUTCOME_UNKNOWN (a retry
      // without an Idempotency-Key would count an increment twice).
      const args = boardWriteArgs(op, userId, arg, period, this.limitsArg, idempotency?.fingerprint ?? '', version);
      const raw = await changing(this.redis, () =>
        this.redis.boardWrite(fixed.length + period.keys.length, ...fixed, ...period.keys, ...args),
      );
      const reply = decodeBoardWrite(raw, op);
      if (reply.status === 'unregistered') {
        this.known.set(cacheKey, await this.register(workspaceId, board, context.nowMs));
      } else if (reply.status === 'periods-changed') {
        this.known.set(cacheKey, reply.periods);
      } else {
        return reply;
      }
    }
    throw new AppError(ErrorCode.INTERNAL, `The periods of board ${board} kept changing during a write`);
  }

  /** Registers a board (its first write) and gives its meta the registry's periods. */
  private async register(workspaceId: string, board: string, nowMs: number): Promise<string> {
    const registered = await this.registry.register(workspaceId, board, nowMs);
    if (!registered.ok) {
      throw new AppError(
        ErrorCode.TOO_MANY_BOARDS,
        `The workspace has ${registered.boards} leaderboards, the most it may have (LEADERBOARD_MAX_BOARDS): write to an existing board, or delete one`,
      );
    }
    return this.syncMeta(workspaceId, board, registered.config.periods, false);
  }

  /**
   * Copies the periods into the board's meta: only where it has none yet (a first write), or
   * over them (an operator's change, made in the registry first).
   */
  async syncMeta(workspaceId: string, board: string, periods: readonly Period[], overwrite: boolean): Promise<string> {
    const field = periodsField(periods);
    const meta = keys.boardMeta(workspaceId, board);
    if (overwrite) await this.redis.hset(meta, 'p', field);
    else await this.redis.hsetnx(meta, 'p', field);
    return field;
  }

  async page(workspaceId: string, board: string, query: PageQuery, nowMs: number): Promise<PageResult> {
    const period = periodKeys(workspaceId, board, query.period, nowMs, query.previous);
    if (query.after === undefined && query.min === undefined && query.max === undefined) return this.firstPage(workspaceId, board, query, period);
    const raw = await this.redis.boardPage(keys.boardMeta(workspaceId, board), period.scores, ...boardPageArgs(query));
    return decodeBoardPage(raw, query.order, period.window);
  }

  /**
   * The first page, the one games read most (a top 10 shown in the world): one ZRANGE, one more
   * entry than asked for to know whether a page follows, as a bare sorted set would be read.
   * Only an empty page reads the board's meta, to say whether the period is kept.
   */
  private async firstPage(workspaceId: string, board: string, query: PageQuery, period: PeriodKeys): Promise<PageResult> {
    const stop = String(query.limit);
    const flat =
      query.order === 'desc'
        ? await this.redis.zrange(period.scores, '0', stop, 'REV', 'WITHSCORES')
        : await this.redis.zrange(period.scores, '0', stop, 'WITHSCORES');
    if (flat.length === 0) {
      const kept = await this.redis.hget(keys.boardMeta(workspaceId, board), 'p');
      const periods = kept === null ? [] : parsePeriodsField(kept);
      if (kept !== null && !periods.includes(query.period)) return { kept: false, periods };
    }
    const more = flat.length > 2 * query.limit;
    const entries = entriesOf(more ? flat.slice(0, 2 * query.limit) : flat, 0, 0);
    const last = 2 * query.limit - 2;
    const next = more ? encodeCursor({ order: query.order, member: flat[last]!, score: flat[last + 1]! }) : null;
    return { kept: true, window: period.window, entries, next };
  }

  async rank(workspaceId: string, board: string, userId: string, query: Omit<PageQuery, 'limit' | 'after' | 'min' | 'max'> & { around: number }, nowMs: number): Promise<RankResult> {
    const period = periodKeys(workspaceId, board, query.period, nowMs, query.previous);
    const raw = await this.redis.boardRank(keys.boardMeta(workspaceId, board), period.scores, period.members, ...boardRankArgs(query.period, query.order, userId, query.around));
    return decodeBoardRank(raw, period.window);
  }

  /**
   * Empties the board (every period that can still exist); with `drop`, its meta goes too (the
   * caller removes it from the registry first). Returns the entries removed and the change of
   * the entries counted into storage.
   */
  async reset(workspaceId: string, board: string, nowMs: number, drop = false): Promise<{ removed: number; entriesDelta: number }> {
    const periodKeyList = everyPeriodKey(workspaceId, board, nowMs);
    const [removed, entriesDelta] = await this.redis.boardReset(
      2 + periodKeyList.length,
      keys.boardMeta(workspaceId, board),
      keys.boardFollowed(workspaceId, board),
      ...periodKeyList,
      drop ? 'drop' : 'reset',
    );
    if (drop) this.known.delete(`${workspaceId}\n${board}`);
    return { removed: Number(removed), entriesDelta: Number(entriesDelta) };
  }

  /** Entries in each period the board keeps, now. */
  async counts(workspaceId: string, board: string, periods: readonly Period[], nowMs: number): Promise<Array<{ period: Period; id: string; entries: number }>> {
    return Promise.all(
      periods.map(async (period) => {
        const keysOf = periodKeys(workspaceId, board, period, nowMs);
        return { period, id: keysOf.window.id, entries: await this.redis.zcard(keysOf.scores) };
      }),
    );
  }
}
