// Leaderboards in a workspace export (NDJSON, after the players; docs/backups.md): each board is
// a config line, `{"board","config":{"periods","follow"}}`, then its entries, a line per chunk
// of one period, best first: `{"board","period","id","entries":[["<userId>",<score>],...]}`.
// The import loads a board's lines in order, so tied players keep their order. Existing boards
// follow the import's mode as players do: skip keeps them, overwrite empties and replaces them,
// fail writes nothing when one exists. An erased player's entries are left out in every mode.
import { normalizeUserId } from '../domain/ids.js';
import { isBoardName } from '../domain/leaderboard.js';
import { isPeriod, periodOfId, periodAt, type Period, type PeriodWindow } from '../domain/periods.js';
import { ErrorCode } from '../errors.js';
import { BOARD_ENTRY_BYTES } from '../store/boards/board-memory.js';
import { canonicalPeriods } from '../store/boards/board-registry.js';
import { readBoardPeriods, TRANSFER_CHUNK, writeBoardEntries } from '../store/boards/board-transfer.js';
import { addToStorageTotals } from '../store/workspaces/storage-usage.js';
import type { AdminContext } from './context.js';
import type { ErasedFilter } from './erased-players.js';
import { LineError } from './player-lines.js';

/** Entries one line may carry (the export writes TRANSFER_CHUNK). */
const MAX_LINE_ENTRIES = 10 * TRANSFER_CHUNK;
const BOARD_LINE = /^\s*\{\s*"board"\s*:/;

export function isBoardLine(text: string): boolean {
  return BOARD_LINE.test(text);
}

export interface BoardStats {
  boards: number;
  entries: number;
}

/** The lines of every board of the workspace, each with its newline. */
export async function* boardLines(ctx: AdminContext, workspaceId: string, stats: BoardStats): AsyncGenerator<string> {
  const nowMs = ctx.nowMs();
  for (const board of await ctx.boards.registry.list(workspaceId)) {
    const config = { periods: board.periods, ...(board.follow ? { follow: board.follow } : {}) };
    stats.boards++;
    yield `${JSON.stringify({ board: board.board, config })}\n`;
    for await (const chunk of readBoardPeriods(ctx.boards, workspaceId, board.board, board.periods, nowMs)) {
      stats.entries += chunk.entries.length;
      const entries = chunk.entries.map(([userId, score]) => `[${JSON.stringify(userId)},${JSON.stringify(Number(score))}]`).join(',');
      yield `{"board":${JSON.stringify(board.board)},"period":"${chunk.period}","id":"${chunk.id}","entries":[${entries}]}\n`;
    }
  }
}

export type BoardLine =
  | { readonly kind: 'config'; readonly board: string; readonly periods: Period[]; readonly follow: string | null }
  | { readonly kind: 'entries'; readonly board: string; readonly window: PeriodWindow; readonly entries: Array<readonly [string, string]> };

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

export function parseBoardLine(text: string): BoardLine {
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch (err) {
    throw new LineError(`not valid JSON (${(err as Error).message})`);
  }
  if (!isObject(parsed) || !isBoardName(parsed['board'])) throw new LineError('board must be a board name: 1-64 characters from A-Z a-z 0-9 _ . -');
  const board = parsed['board'];
  if ('config' in parsed) {
    const config = parsed['config'];
    const periods = isObject(config) && Array.isArray(config['periods']) ? config['periods'] : [];
    if (periods.length === 0 || !periods.every(isPeriod)) throw new LineError(`board ${board}: config.periods must list all, daily, weekly or monthly`);
    const follow = isObject(config) && isObject(config['follow']) && typeof config['follow']['key'] === 'string' ? config['follow']['key'] : null;
    return { kind: 'config', board, periods: canonicalPeriods(periods as Period[]), follow };
  }
  const period = parsed['period'];
  const id = parsed['id'];
  let window: PeriodWindow | undefined;
  if (period === 'all') window = periodAt('all', 0);
  else if (isPeriod(period) && period !== 'all' && typeof id === 'string') window = periodOfId(period, id);
  if (!window) throw new LineError(`board ${board}: a line of entries names its period (all, or daily/weekly/monthly with its id)`);
  const raw = parsed['entries'];
  if (!Array.isArray(raw) || raw.length > MAX_LINE_ENTRIES) throw new LineError(`board ${board}: entries must be an array of at most ${MAX_LINE_ENTRIES} [userId, score]`);
  const entries = raw.map((entry, i) => {
    const userId = Array.isArray(entry) && entry.length === 2 ? normalizeUserId(entry[0]) : undefined;
    const score = Array.isArray(entry) ? entry[1] : undefined;
    if (userId === undefined || typeof score !== 'number' || !Number.isFinite(score)) {
      throw new LineError(`board ${board}: entries[${i}] must be [userId, a finite score]`);
    }
    return [userId, String(score)] as const;
  });
  return { kind: 'entries', board, window, entries };
}

export interface BoardImportCounts {
  imported: number;
  replaced: number;
  skipped: number;
  entries: number;
  /** Entries not loaded because their player was erased (a tombstone in the workspace; docs/erasure.md). */
  erased: number;
}

export interface LineProblem {
  readonly code: ErrorCode;
  readonly error: string;
}

/** Loads board lines into a workspace, in file order, under the import's mode. */
export class BoardImport {
  /** Boards whose lines are loaded (their config line was applied), and those passed over. */
  private readonly loading = new Set<string>();
  private readonly passed = new Set<string>();

  constructor(
    private readonly ctx: AdminContext,
    private readonly workspaceId: string,
    private readonly mode: 'skip' | 'overwrite',
    readonly counts: BoardImportCounts,
    /** Erased players: their entries are not loaded, as their player lines are not. */
    private readonly erased: ErasedFilter,
  ) {}

  /** Mode fail's first pass: a board that exists is a conflict. */
  static async conflict(ctx: AdminContext, workspaceId: string, line: BoardLine): Promise<LineProblem | undefined> {
    if (line.kind !== 'config' || !(await ctx.boards.registry.get(workspaceId, line.board))) return undefined;
    return { code: ErrorCode.CONFLICT, error: `board ${line.board} exists (mode fail)` };
  }

  /** Applies one line; a refusal of it is returned, nothing of it written. */
  async apply(line: BoardLine): Promise<LineProblem | undefined> {
    const { ctx, workspaceId } = this;
    const nowMs = ctx.nowMs();
    if (line.kind === 'config') {
      const exists = (await ctx.boards.registry.get(workspaceId, line.board)) !== undefined;
      if (exists && this.mode === 'skip') {
        this.passed.add(line.board);
        this.counts.skipped++;
        return undefined;
      }
      if (exists) await this.count((await ctx.boards.reset(workspaceId, line.board, nowMs)).entriesDelta);
      const set = await ctx.boards.registry.register(workspaceId, line.board, nowMs, { field: 'periods', periods: line.periods });
      if (!set.ok) {
        this.passed.add(line.board);
        return { code: ErrorCode.TOO_MANY_BOARDS, error: `board ${line.board}: the workspace has its most boards (${set.boards})` };
      }
      await ctx.boards.registry.register(workspaceId, line.board, nowMs, { field: 'follow', key: line.follow });
      await ctx.boards.syncMeta(workspaceId, line.board, line.periods, true);
      this.loading.add(line.board);
      if (exists) this.counts.replaced++;
      else this.counts.imported++;
      return undefined;
    }
    if (this.passed.has(line.board)) return undefined;
    if (!this.loading.has(line.board)) return { code: ErrorCode.INVALID_REQUEST, error: `board ${line.board}: entries before the board's config line` };
    const erased = await this.erased.among(line.entries.map(([userId]) => userId));
    const entries = erased.size === 0 ? line.entries : line.entries.filter(([userId]) => !erased.has(userId));
    this.counts.erased += line.entries.length - entries.length;
    let problem: LineProblem | undefined;
    for (let i = 0; i < entries.length && !problem; i += TRANSFER_CHUNK) {
      const chunk = entries.slice(i, i + TRANSFER_CHUNK);
      const written = await writeBoardEntries(ctx.redis, workspaceId, line.board, line.window, chunk, ctx.boards.limits.maxEntries, nowMs);
      this.counts.entries += written.written;
      await this.count(written.entriesDelta);
      if (written.full) problem = { code: ErrorCode.BOARD_FULL, error: `board ${line.board}: the ${line.window.period} period is full (LEADERBOARD_MAX_ENTRIES)` };
    }
    return problem;
  }

  private async count(entriesDelta: number): Promise<void> {
    if (entriesDelta !== 0) await addToStorageTotals(this.ctx.redis, this.workspaceId, { boards: entriesDelta * BOARD_ENTRY_BYTES });
  }
}
