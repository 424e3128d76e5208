// Leaderboard: the calls of one board of the workspace (the service's docs/leaderboards.md), on
// the client's transport: set, increment and delete a player's score (each with an
// Idempotency-Key, reused by its retries), the top entries, pages after a cursor, a player's
// rank and the entries around it. A board is read in the period it was made for.
import { isMissing, succeeded, type Body } from './answers.js';
import { checkNumber, userIdText } from './checks.js';
import type { Operation } from './errors.js';
import type { Answer } from './transport.js';
import type { CallOptions, UserId, WriteOptions } from './types.js';

export type Period = 'all' | 'daily' | 'weekly' | 'monthly';
export type Order = 'desc' | 'asc';

export interface LeaderboardOptions {
  /** The period read (default all-time); writes go to every period the board keeps. */
  readonly period?: Period;
  /** Read the period before the current one (yesterday, last week, last month). */
  readonly previous?: boolean;
}

export interface BoardEntry {
  readonly rank: number;
  readonly userId: string;
  readonly score: number;
}

export interface PeriodInfo {
  readonly name: Exclude<Period, 'all'>;
  readonly id: string;
  readonly startsAt: string;
  readonly endsAt: string;
}

export interface BoardPage {
  readonly entries: BoardEntry[];
  /** The cursor of the next page (`after`), or null on the last. */
  readonly next: string | null;
  readonly period?: PeriodInfo;
}

export interface PageOptions extends CallOptions {
  /** 1-100, default 10. */
  readonly limit?: number;
  readonly after?: string | null;
  /** desc (default): highest first, ties by who reached the score first; asc: the exact reverse. */
  readonly order?: Order;
  readonly min?: number;
  readonly max?: number;
}

export interface PlayerRank {
  readonly userId: string;
  readonly rank: number;
  readonly score: number;
}

export interface ScoreResult {
  readonly userId: string;
  /** The new score: all-time, or the longest period the board keeps. */
  readonly score: number;
  /** The new score in each period the board keeps. */
  readonly scores: Partial<Record<Period, number>>;
}

/** What a Leaderboard needs of its client: a read and an idempotent write. */
export interface BoardTransport {
  read(operation: Operation, path: string, signal: AbortSignal | undefined): Promise<Answer>;
  write(operation: Operation, path: string, body: object, options: WriteOptions): Promise<Answer>;
}

const BOARD_NAME = /^[A-Za-z0-9_.-]{1,64}$/;
const MAX_PAGE = 100;
const MAX_AROUND = 50;

function wholeIn(operation: Operation, value: number | undefined, field: string, min: number, max: number): number | undefined {
  if (value === undefined) return undefined;
  if (!Number.isInteger(value) || value < min || value > max) {
    throw new TypeError(`PlayerData.${operation}: ${field} must be a whole number from ${min} to ${max}, got ${String(value)}`);
  }
  return value;
}

export class Leaderboard {
  private readonly base: string;

  constructor(
    readonly name: string,
    private readonly options: LeaderboardOptions,
    private readonly transport: BoardTransport,
  ) {
    if (typeof name !== 'string' || !BOARD_NAME.test(name)) {
      throw new TypeError(`PlayerData.leaderboard: the name must be 1-64 characters from A-Z a-z 0-9 _ . -, got ${String(name)}`);
    }
    this.base = `/leaderboards/${name}`;
  }

  /** Sets the player's score in every period the board keeps. */
  async set(userId: UserId, score: number, options: WriteOptions = {}): Promise<ScoreResult> {
    const op: Operation = 'leaderboard.set';
    if (typeof score !== 'number' || !Number.isFinite(score)) throw new TypeError(`PlayerData.${op}: score must be a finite number, got ${String(score)}`);
    const body = { userId: userIdText(op, userId), score };
    return this.scored(op, await this.transport.write(op, `${this.base}/set`, body, options));
  }

  /** Adds `amount` (default 1) to the player's score in every period the board keeps. */
  async increment(userId: UserId, amount?: number, options: WriteOptions = {}): Promise<ScoreResult> {
    const op: Operation = 'leaderboard.increment';
    const body = { userId: userIdText(op, userId), amount: checkNumber(op, amount, 'amount') };
    return this.scored(op, await this.transport.write(op, `${this.base}/increment`, body, options));
  }

  /** Takes the player off the board (every period); false when it was not on it. */
  async delete(userId: UserId, options: WriteOptions = {}): Promise<boolean> {
    const op: Operation = 'leaderboard.delete';
    const answer = succeeded(op, await this.transport.write(op, `${this.base}/delete`, { userId: userIdText(op, userId) }, options));
    return answer['data'].deleted === 1;
  }

  /** The best `n` entries (default 10, at most 100). */
  async top(n = 10, options: CallOptions & { order?: Order } = {}): Promise<BoardEntry[]> {
    wholeIn('leaderboard.top', n, 'n', 1, MAX_PAGE);
    return (await this.pageAs('leaderboard.top', { ...options, limit: n })).entries;
  }

  /** One page; pass its `next` as `after` for the next one. */
  page(options: PageOptions = {}): Promise<BoardPage> {
    return this.pageAs('leaderboard.page', options);
  }

  /** Every page in turn, from the first (or `after`), until the last. */
  async *pages(options: PageOptions = {}): AsyncGenerator<BoardPage> {
    let after = options.after ?? null;
    do {
      const page = await this.pageAs('leaderboard.pages', { ...options, after });
      yield page;
      after = page.next;
    } while (after !== null);
  }

  /** The player's rank and score, or undefined when the player is not on the board. */
  async rank(userId: UserId, options: CallOptions & { order?: Order } = {}): Promise<PlayerRank | undefined> {
    const body = await this.player('leaderboard.rank', userId, 0, options);
    return body === undefined ? undefined : { userId: body.userId, rank: body.rank, score: body.score };
  }

  /** The player and up to `n` entries above and below (0-50); [] when the player is not on the board. */
  async around(userId: UserId, n: number, options: CallOptions & { order?: Order } = {}): Promise<BoardEntry[]> {
    wholeIn('leaderboard.around', n, 'n', 0, MAX_AROUND);
    const body = await this.player('leaderboard.around', userId, n, options);
    if (body === undefined) return [];
    return n === 0 ? [{ rank: body.rank, userId: body.userId, score: body.score }] : (body.entries as BoardEntry[]);
  }

  private query(extra: Record<string, string | number | undefined>): string {
    const params = new URLSearchParams();
    if (this.options.period !== undefined) params.set('period', this.options.period);
    if (this.options.previous) params.set('previous', 'true');
    for (const [k, v] of Object.entries(extra)) if (v !== undefined) params.set(k, String(v));
    const text = params.toString();
    return text === '' ? '' : `?${text}`;
  }

  private async pageAs(op: Operation, options: PageOptions): Promise<BoardPage> {
    const query = this.query({
      limit: wholeIn(op, options.limit, 'limit', 1, MAX_PAGE),
      after: options.after ?? undefined,
      order: options.order,
      min: checkNumber(op, options.min, 'min'),
      max: checkNumber(op, options.max, 'max'),
    });
    const data = succeeded(op, await this.transport.read(op, `${this.base}${query}`, options.signal))['data'];
    return { entries: data.entries, next: data.next, ...(data.period ? { period: data.period } : {}) };
  }

  private async player(op: Operation, userId: UserId, around: number, options: CallOptions & { order?: Order }): Promise<Body | undefined> {
    const id = encodeURIComponent(userIdText(op, userId));
    const answer = await this.transport.read(op, `${this.base}/players/${id}${this.query({ around: around || undefined, order: options.order })}`, options.signal);
    if (isMissing(op, answer)) return undefined;
    return succeeded(op, answer)['data'];
  }

  private scored(op: Operation, answer: Answer): ScoreResult {
    const data = succeeded(op, answer)['data'];
    return { userId: data.userId, score: data.score, scores: data.scores };
  }
}
