// The leaderboard endpoints under /leaderboards/:board (docs/leaderboards.md): validate, call the
// store (reads) or boards/board-writes.ts (writes), shape the answer. Each is one request
// against the plan, behind the same guard as the data routes; writes need the write scope and
// take an Idempotency-Key.
import type Router from '@koa/router';
import type { Context, Middleware } from 'koa';
import { parse as parseQuery } from 'node:querystring';
import type { BoardWrites } from '../../boards/board-writes.js';
import type { Config } from '../../config.js';
import { isoTime } from '../../domain/entry.js';
import { normalizeUserId } from '../../domain/ids.js';
import { decodeCursor, isBoardName, type Order } from '../../domain/leaderboard.js';
import type { Period, PeriodWindow } from '../../domain/periods.js';
import { AppError, badRequest, ErrorCode } from '../../errors.js';
import {
  boardPageQuery,
  boardPlayerQuery,
  deleteScoreBody,
  incrementScoreBody,
  MAX_AROUND,
  MAX_PAGE_ENTRIES,
  setScoreBody,
} from '../../schemas/leaderboards.js';
import type { BoardEntry, LeaderboardStore } from '../../store/boards/leaderboard-store.js';
import { chain } from '../chain.js';
import { sendJson } from '../json.js';
import { requireWriteScope } from '../middleware/authenticate.js';
import { jsonBody } from '../middleware/json-body.js';
import type { AppState } from '../state.js';
import { compile } from '../validate.js';
import { markReplayed, writeOrigin } from '../write-origin.js';
import { userIdOf } from './data.js';

type UserIdInput = string | number;
interface PeriodInput {
  period?: Period;
  previous?: 'true' | 'false';
  order?: Order;
}
const validatePage = compile<PeriodInput & { limit?: string; after?: string; min?: string; max?: string }>(boardPageQuery);
const validatePlayer = compile<PeriodInput & { around?: string }>(boardPlayerQuery);
const validateSet = compile<{ userId: UserIdInput; score: number }>(setScoreBody);
const validateIncrement = compile<{ userId: UserIdInput; amount?: number }>(incrementScoreBody);
const validateDelete = compile<{ userId: UserIdInput }>(deleteScoreBody);

/** The first period of these that a write's answer calls its `score`: the longest kept. */
const PRIMARY: readonly Period[] = ['all', 'monthly', 'weekly', 'daily'];
const DEFAULT_PAGE = 10;

export interface LeaderboardRouteDeps {
  readonly guard: Middleware<AppState>;
  readonly recheck: Middleware<AppState>;
  readonly boards: LeaderboardStore;
  readonly boardWrites: BoardWrites;
  readonly config: Pick<Config, 'limits'>;
  }

function boardOf(ctx: Context): string {
  const board = ctx.params['board'];
  if (!isBoardName(board)) throw badRequest('Invalid board name in the path: must be 1-64 characters from A-Z a-z 0-9 _ . -');
  return board;
}

function finite(n: number, field: string): number {
  if (!Number.isFinite(n)) throw badRequest(`Invalid field "${field}" in body: must be a finite number`);
  return n;
}

function periodOf(input: PeriodInput): { period: Period; previous: boolean; order: Order } {
  const period = input.period ?? 'all';
  const previous = input.previous === 'true';
  if (previous && period === 'all') throw badRequest('Invalid query: previous=true needs a period (daily, weekly or monthly); all-time has no previous period');
  return { period, previous, order: input.order ?? 'desc' };
}

function queryNumber(text: string | undefined, field: string): number | undefined {
  if (text === undefined) return undefined;
  const n = Number(text);
  if (!Number.isFinite(n)) throw badRequest(`Invalid field "${field}" in query: must be a finite number`);
  return n;
}

const scoreJson = (score: string) => JSON.stringify(Number(score));
const entriesJson = (entries: readonly BoardEntry[]) =>
  entries.map((e) => `{"rank":${e.rank},"userId":${JSON.stringify(e.userId)},"score":${scoreJson(e.score)}}`).join(',');
const periodJson = (window: PeriodWindow) =>
  window.period === 'all'
    ? ''
    : `,"period":{"name":"${window.period}","id":"${window.id}","startsAt":"${isoTime(window.startMs)}","endsAt":"${isoTime(window.endMs)}"}`;

function notKept(board: string, asked: Period, periods: readonly Period[]): AppError {
  return new AppError(
    ErrorCode.PERIOD_NOT_KEPT,
    `Board ${board} keeps ${periods.join(', ')}, not ${asked}: an operator chooses a board's periods (board set-periods)`,
  );
}

export function leaderboardRoutes(router: Router<AppState>, deps: LeaderboardRouteDeps): void {
  const { guard, recheck, boards, boardWrites, config } = deps;
  const body = chain(jsonBody(config.limits.maxBodyBytes), recheck);
  const nowOf = (ctx: { state: AppState }) => ctx.state.startedAt;

  router.get('/leaderboards/:board', chain(guard, async (ctx) => {
    const board = boardOf(ctx);
    const query = validatePage('query', parseQuery(ctx.querystring));
    const { period, previous, order } = periodOf(query);
    const limit = query.limit === undefined ? DEFAULT_PAGE : Number(query.limit);
    if (limit > MAX_PAGE_ENTRIES) throw badRequest(`Invalid field "limit" in query: must be a whole number from 1 to ${MAX_PAGE_ENTRIES}`);
    let after;
    if (query.after !== undefined) {
      after = decodeCursor(query.after);
      if (after === undefined || after.order !== order) {
        throw badRequest('Invalid field "after" in query: must be the "next" of a previous page, in the same order');
      }
    }
    const workspaceId = ctx.state.principal!.workspace.id;
    const page = await boards.page(
      workspaceId,
      board,
      { period, previous, order, limit, after, min: queryNumber(query.min, 'min'), max: queryNumber(query.max, 'max') },
      nowOf(ctx),
    );
    if (!page.kept) throw notKept(board, period, page.periods);
    sendJson(
      ctx,
      `{"success":true,"data":{"entries":[${entriesJson(page.entries)}],"next":${page.next === null ? 'null' : `"${page.next}"`}${periodJson(page.window)}}}`,
    );
  }));

  router.get('/leaderboards/:board/players/:userId', chain(guard, async (ctx) => {
    const board = boardOf(ctx);
    const userId = normalizeUserId(ctx.params['userId']);
    if (userId === undefined) throw badRequest('Invalid user id in the path: must be a non-negative integer or 1-64 characters from A-Z a-z 0-9 _ . -');
    const query = validatePlayer('query', parseQuery(ctx.querystring));
    const around = query.around === undefined ? 0 : Number(query.around);
    if (around > MAX_AROUND) throw badRequest(`Invalid field "around" in query: must be a whole number from 0 to ${MAX_AROUND}`);
    const result = await boards.rank(ctx.state.principal!.workspace.id, board, userId, { ...periodOf(query), around }, nowOf(ctx));
    if (!result.kept) throw notKept(board, query.period ?? 'all', result.periods);
    if (!result.found) throw new AppError(ErrorCode.PLAYER_NOT_FOUND, `Player ${userId} is not on this board`);
    const entries = around > 0 ? `,"entries":[${entriesJson(result.entries)}]` : '';
    sendJson(
      ctx,
      `{"success":true,"data":{"userId":${JSON.stringify(userId)},"rank":${result.rank},"score":${scoreJson(result.score)}${entries}${periodJson(result.window)}}}`,
    );
  }));

  const write = async (ctx: Context & { state: AppState }, input: { userId: UserIdInput }, op: Parameters<BoardWrites['write']>[3]) => {
    const origin = writeOrigin(ctx, input);
    const outcome = await boardWrites.write(origin, boardOf(ctx), userIdOf(input.userId), op);
    markReplayed(ctx, outcome.replayed);
    return outcome;
  };

  const scored = (ctx: Context, userId: string, outcome: Awaited<ReturnType<BoardWrites['write']>>) => {
    if (outcome.status !== 'scored') throw new AppError(ErrorCode.INTERNAL, 'A write answered as a delete');
    const scores = new Map(outcome.scores);
    const primary = PRIMARY.find((p) => scores.has(p))!;
    const each = outcome.scores.map(([p, s]) => `"${p}":${scoreJson(s)}`).join(',');
    sendJson(ctx, `{"success":true,"data":{"userId":${JSON.stringify(userId)},"score":${scoreJson(scores.get(primary)!)},"scores":{${each}}}}`);
  };

  router.post('/leaderboards/:board/set', chain(guard, requireWriteScope, body, async (ctx) => {
    const input = validateSet('body', ctx.request.body);
    scored(ctx, userIdOf(input.userId), await write(ctx, input, { op: 'set', score: finite(input.score, 'score') }));
  }));

  router.post('/leaderboards/:board/increment', chain(guard, requireWriteScope, body, async (ctx) => {
    const input = validateIncrement('body', ctx.request.body);
    scored(ctx, userIdOf(input.userId), await write(ctx, input, { op: 'increment', amount: finite(input.amount ?? 1, 'amount') }));
  }));

  router.post('/leaderboards/:board/delete', chain(guard, requireWriteScope, body, async (ctx) => {
    const input = validateDelete('body', ctx.request.body);
    const outcome = await write(ctx, input, { op: 'delete' });
    sendJson(ctx, `{"success":true,"data":{"deleted":${outcome.status === 'deleted' && outcome.deleted ? 1 : 0}}}`);
  }));
}
