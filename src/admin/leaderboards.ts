// A workspace's leaderboards for operators, shared by the CLI, the admin API and the console:
// list the boards, show a page, find a player's rank, take a player off a board, reset or delete a board, and set
// what a board keeps (its periods) and follows (a player key). Every change is audited; the
// entries an operator removes are taken off the workspace's storage total at once.
import { decodeCursor, isBoardName, type Order } from '../domain/leaderboard.js';
import { isPeriod, type Period } from '../domain/periods.js';
import { AppError, badRequest, ErrorCode, notFound } from '../errors.js';
import { MAX_AROUND } from '../schemas/leaderboards.js';
import { BOARD_ENTRY_BYTES } from '../store/boards/board-memory.js';
import type { BoardConfig, RegisteredBoard } from '../store/boards/board-registry.js';
import { canonicalPeriods } from '../store/boards/board-registry.js';
import type { LeaderboardStore } from '../store/boards/leaderboard-store.js';
import { addToStorageTotals } from '../store/workspaces/storage-usage.js';
import { keys } from '../store/keys.js';
import { publishEvent } from '../store/redis/events.js';
import type { AdminContext } from './context.js';
import { parseDataKey, parsePositiveInt, parseUserId, parseWholeNumber } from './inputs.js';

export const ADMIN_PAGE_MAX = 100;
const BACKFILL_PAGE = 500;
const BACKFILL_PARALLEL = 50;

export interface BoardSummary extends RegisteredBoard {
  /** Entries now in each period the board keeps (the current one). */
  readonly entries: Array<{ readonly period: Period; readonly id: string; readonly entries: number }>;
}

export interface AdminBoardPage {
  readonly board: string;
  readonly period: Period;
  readonly periodId: string;
  readonly entries: Array<{ rank: number; userId: string; score: number }>;
  readonly next: string | null;
}

/** One player's place on a board, with the entries around it when asked for. */
export interface AdminBoardRank {
  readonly board: string;
  readonly period: Period;
  readonly periodId: string;
  readonly userId: string;
  readonly rank: number;
  readonly score: number;
  readonly entries: Array<{ rank: number; userId: string; score: number }>;
}

export interface PageOptions {
  readonly period?: string | undefined;
  readonly previous?: boolean | undefined;
  readonly order?: string | undefined;
  readonly limit?: string | number | undefined;
  readonly after?: string | undefined;
}

export function parseBoardName(raw: string): string {
  if (!isBoardName(raw)) throw badRequest('Board name must be 1-64 characters from A-Z a-z 0-9 _ . -');
  return raw;
}

/** `all,daily` or a list; each of all, daily, weekly, monthly, at least one. */
export function parsePeriods(raw: string | readonly string[]): Period[] {
  const parts = (typeof raw === 'string' ? raw.split(',') : [...raw]).map((p) => p.trim()).filter((p) => p !== '');
  const bad = parts.find((p) => !isPeriod(p));
  if (bad !== undefined || parts.length === 0) {
    throw badRequest(`Periods must be one or more of all, daily, weekly, monthly${bad === undefined ? '' : `; got "${bad}"`}`);
  }
  return canonicalPeriods(parts as Period[]);
}

function parseOrder(raw: string | undefined): Order {
  if (raw === undefined || raw === 'desc') return 'desc';
  if (raw === 'asc') return 'asc';
  throw badRequest('Order must be desc or asc');
}

export class BoardOperations {
  constructor(
    private readonly ctx: AdminContext,
    private readonly store: LeaderboardStore,
  ) {}

  private async requireBoard(workspaceId: string, rawBoard: string): Promise<{ board: string; config: BoardConfig }> {
    await this.ctx.requireWorkspace(workspaceId);
    const board = parseBoardName(rawBoard);
    const config = await this.store.registry.get(workspaceId, board);
    if (!config) throw notFound(`Leaderboard ${board} not found in workspace ${workspaceId}`);
    return { board, config };
  }

  async list(workspaceId: string): Promise<BoardSummary[]> {
    await this.ctx.requireWorkspace(workspaceId);
    const now = this.ctx.nowMs();
    const boards = await this.store.registry.list(workspaceId);
    return Promise.all(boards.map(async (b) => ({ ...b, entries: await this.store.counts(workspaceId, b.board, b.periods, now) })));
  }

  async page(workspaceId: string, rawBoard: string, options: PageOptions = {}): Promise<AdminBoardPage> {
    const { board } = await this.requireBoard(workspaceId, rawBoard);
    const period = options.period ?? 'all';
    if (!isPeriod(period)) throw badRequest('Period must be all, daily, weekly or monthly');
    const order = parseOrder(options.order);
    const limit = parsePositiveInt(options.limit ?? 20, 'limit', ADMIN_PAGE_MAX);
    const after = options.after === undefined ? undefined : decodeCursor(options.after);
    if (options.after !== undefined && after?.order !== order) throw badRequest('after must be the "next" of a previous page, in the same order');
    if (options.previous && period === 'all') throw badRequest('previous needs a period (daily, weekly or monthly)');
    const result = await this.store.page(workspaceId, board, { period, previous: options.previous === true, order, limit, after }, this.ctx.nowMs());
    if (!result.kept) throw new AppError(ErrorCode.PERIOD_NOT_KEPT, `Board ${board} keeps ${result.periods.join(', ')}, not ${period}`);
    return {
      board,
      period,
      periodId: result.window.id,
      entries: result.entries.map((e) => ({ rank: e.rank, userId: e.userId, score: Number(e.score) })),
      next: result.next,
    };
  }

  /**
   * Where one player stands in a period (rank 1 is the best in that order), and `around`
   * entries above and below; PLAYER_NOT_FOUND when the player has no entry there.
   */
  async rank(
    workspaceId: string,
    rawBoard: string,
    rawUserId: string | number,
    options: Omit<PageOptions, 'limit' | 'after'> & { around?: string | number | undefined } = {},
  ): Promise<AdminBoardRank> {
    const { board } = await this.requireBoard(workspaceId, rawBoard);
    const userId = parseUserId(rawUserId);
    const period = options.period ?? 'all';
    if (!isPeriod(period)) throw badRequest('Period must be all, daily, weekly or monthly');
    const order = parseOrder(options.order);
    if (options.previous && period === 'all') throw badRequest('previous needs a period (daily, weekly or monthly)');
    const around = options.around === undefined ? 0 : parseWholeNumber(options.around, 'around', MAX_AROUND);
    const result = await this.store.rank(workspaceId, board, userId, { period, previous: options.previous === true, order, around }, this.ctx.nowMs());
    if (!result.kept) throw new AppError(ErrorCode.PERIOD_NOT_KEPT, `Board ${board} keeps ${result.periods.join(', ')}, not ${period}`);
    if (!result.found) throw new AppError(ErrorCode.PLAYER_NOT_FOUND, `Player ${userId} has no entry on ${board} (${period === 'all' ? 'all-time' : `${period} ${result.window.id}`})`);
    return {
      board,
      period,
      periodId: result.window.id,
      userId,
      rank: result.rank,
      score: Number(result.score),
      entries: result.entries.map((e) => ({ rank: e.rank, userId: e.userId, score: Number(e.score) })),
    };
  }

  /** Takes one player off every period of the board. */
  async removeEntry(workspaceId: string, rawBoard: string, rawUserId: string | number): Promise<{ board: string; userId: string; deleted: number }> {
    const { board } = await this.requireBoard(workspaceId, rawBoard);
    const userId = parseUserId(rawUserId);
    const reply = await this.store.write(workspaceId, board, userId, { op: 'delete' }, { nowMs: this.ctx.nowMs() });
    if (reply.status !== 'deleted') throw new AppError(ErrorCode.INTERNAL, 'A delete answered as a write');
    await this.counted(workspaceId, reply.entriesDelta);
    const deleted = reply.deleted ? 1 : 0;
    await this.ctx.audit('board.remove-entry', `board:${workspaceId}/${board}`, { workspaceId, details: { userId, deleted } });
    return { board, userId, deleted };
  }

  /** Empties every period of the board; its config stays. */
  async reset(workspaceId: string, rawBoard: string): Promise<{ board: string; removed: number }> {
    const { board } = await this.requireBoard(workspaceId, rawBoard);
    const { removed, entriesDelta } = await this.store.reset(workspaceId, board, this.ctx.nowMs());
    await this.counted(workspaceId, entriesDelta);
    await this.ctx.audit('board.reset', `board:${workspaceId}/${board}`, { workspaceId, details: { removed } });
    return { board, removed };
  }

  /** Deletes the board, config and entries: it no longer counts toward the most boards. */
  async delete(workspaceId: string, rawBoard: string): Promise<{ board: string; removed: number }> {
    const { board } = await this.requireBoard(workspaceId, rawBoard);
    // The registry first: a write racing the deletion then registers the board anew, as a game's
    // write after the deletion would, rather than leave entries no registry lists.
    await this.store.registry.remove(workspaceId, board);
    // A board that followed a key is no longer written by the instances' write paths.
    await publishEvent(this.ctx.redis, { type: 'workspace', workspaceId });
    const { removed, entriesDelta } = await this.store.reset(workspaceId, board, this.ctx.nowMs(), true);
    await this.counted(workspaceId, entriesDelta);
    await this.ctx.audit('board.delete', `board:${workspaceId}/${board}`, { workspaceId, details: { removed } });
    return { board, removed };
  }

  /**
   * Sets the periods every write of the board goes to (a board not written yet is registered).
   * Entries of a period no longer kept stay readable by no one and expire with their period.
   */
  async setPeriods(workspaceId: string, rawBoard: string, raw: string | readonly string[]): Promise<RegisteredBoard> {
    await this.ctx.requireWorkspace(workspaceId);
    const board = parseBoardName(rawBoard);
    const periods = parsePeriods(raw);
    const config = await this.change(workspaceId, board, { field: 'periods', periods });
    await this.store.syncMeta(workspaceId, board, config.periods, true);
    await this.ctx.audit('board.set-periods', `board:${workspaceId}/${board}`, { workspaceId, details: { periods: periods.join(',') } });
    return { board, ...config };
  }

  /**
   * Makes the board follow a player key (null: follow none): every instance learns it at once
   * (a workspace event), from then on every write of the key puts the stored value on the board
   * (boards/followed-writes.ts), and the players already on the players list are put on it now
   * (`backfilled`), a page at a time.
   */
  async follow(workspaceId: string, rawBoard: string, rawKey: string | null): Promise<RegisteredBoard & { backfilled: number }> {
    await this.ctx.requireWorkspace(workspaceId);
    const board = parseBoardName(rawBoard);
    const key = rawKey === null ? null : parseDataKey(rawKey);
    const config = await this.change(workspaceId, board, { field: 'follow', key });
    await publishEvent(this.ctx.redis, { type: 'workspace', workspaceId });
    const backfilled = key === null ? 0 : await this.backfill(workspaceId, board, key);
    await this.ctx.audit('board.follow', `board:${workspaceId}/${board}`, { workspaceId, details: { key, backfilled } });
    return { board, ...config, backfilled };
  }

  /** Puts every listed player's stored value of `key` on the board (the players list, 500 at a time). */
  private async backfill(workspaceId: string, board: string, key: string): Promise<number> {
    const followed = new Map([[key, [board]]]);
    const nowMs = this.ctx.nowMs();
    let done = 0;
    for (let start = 0; ; start += BACKFILL_PAGE) {
      const userIds = await this.ctx.redis.zrange(keys.workspacePlayers(workspaceId), String(start), String(start + BACKFILL_PAGE - 1));
      for (let i = 0; i < userIds.length; i += BACKFILL_PARALLEL) {
        await Promise.all(userIds.slice(i, i + BACKFILL_PARALLEL).map((userId) => this.ctx.follow.mend(workspaceId, userId, followed, nowMs)));
      }
      done += userIds.length;
      if (userIds.length < BACKFILL_PAGE) return done;
    }
  }

  private async change(workspaceId: string, board: string, change: Parameters<LeaderboardStore['registry']['register']>[3]): Promise<BoardConfig> {
    const result = await this.store.registry.register(workspaceId, board, this.ctx.nowMs(), change);
    if (!result.ok) throw new AppError(ErrorCode.TOO_MANY_BOARDS, `Workspace ${workspaceId} has ${result.boards} leaderboards, the most it may have`);
    return result.config;
  }

  /** An operator's removals are few, and the CLI has no flush of its own: counted at once. */
  private async counted(workspaceId: string, entriesDelta: number): Promise<void> {
    if (entriesDelta !== 0) await addToStorageTotals(this.ctx.redis, workspaceId, { boards: entriesDelta * BOARD_ENTRY_BYTES });
  }
}
