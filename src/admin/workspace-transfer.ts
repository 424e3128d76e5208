// Export of a workspace's players as NDJSON (one line a player, player-lines.ts) and import of
// such a file into a workspace, the same or another. Both stream: the export pulls players from
// Redis only as fast as its reader takes lines; the import reads one line at a time and keeps at
// most IMPORT_IN_FLIGHT players on their way to Redis. Used by the CLI and the admin API alike.
import { createReadStream } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pipeline } from 'node:stream/promises';
import { badRequest, ErrorCode } from '../errors.js';
import { importPlayer, playersExist, scanPlayerHashes, type ImportMode } from '../store/players/player-transfer.js';
import { addToStorageTotals, readStorageTotals } from '../store/workspaces/storage-usage.js';
import { storedBytesOf } from '../store/players/script-protocol.js';
import type { AdminContext } from './context.js';
import { erasedPlayersFilter, type ErasedFilter } from './erased-players.js';
import { ndjsonLines } from './ndjson-lines.js';
import { createNewFileStream } from './new-files.js';
import { exportLine, LineError, parsePlayerLine, type ImportedPlayer, type LineLimits } from './player-lines.js';
import { BoardImport, boardLines, isBoardLine, parseBoardLine, type BoardImportCounts, type BoardLine } from './board-lines.js';

export const IMPORT_MODES = ['skip', 'overwrite', 'fail'] as const;
export type ImportModeOption = (typeof IMPORT_MODES)[number];
/** Keeps existing players and writes the rest: never destroys data, and a re-run finishes an interrupted import. */
export const DEFAULT_IMPORT_MODE: ImportModeOption = 'skip';
/** Players on their way to Redis at once during an import (measured: bench/transfer.ts). */
export const IMPORT_IN_FLIGHT = 64;
/** Players checked for existence in one round trip (mode fail). */
const CHECK_BATCH = 500;
/** Per-line errors kept in a summary; beyond, only counted. */
export const ERRORS_KEPT = 1000;
/** Storage totals are added to every this many written players, so an interruption loses little. */
const TOTALS_EVERY = 1000;

export interface ExportStats {
  players: number;
  keys: number;
  /** Leaderboards, and their entries over every period exported (board-lines.ts). */
  boards: number;
  boardEntries: number;
  /** Bytes of NDJSON written, newlines included. */
  bytes: number;
}

export interface WorkspaceExport {
  readonly workspaceId: string;
  /** Players with data as the workspace's storage totals say: a progress bar's end, not a promise. */
  readonly expectedPlayers: number;
  /** The NDJSON, one line (with its newline) per player. Pull to read; stop pulling to pause. */
  readonly lines: AsyncGenerator<string>;
  /** Counts so far; final once `lines` is done. */
  readonly stats: ExportStats;
}

export function parseImportMode(raw: string | undefined): ImportModeOption {
  const mode = raw ?? DEFAULT_IMPORT_MODE;
  if (!(IMPORT_MODES as readonly string[]).includes(mode)) throw badRequest(`mode must be one of ${IMPORT_MODES.join(', ')}`);
  return mode as ImportModeOption;
}

export async function exportWorkspace(ctx: AdminContext, workspaceId: string): Promise<WorkspaceExport> {
  await ctx.requireWorkspace(workspaceId);
  const totals = await readStorageTotals(ctx.redis, workspaceId);
  await ctx.audit('workspace.export', `workspace:${workspaceId}`, { workspaceId });
  const stats: ExportStats = { players: 0, keys: 0, boards: 0, boardEntries: 0, bytes: 0 };
  async function* lines(): AsyncGenerator<string> {
    for await (const player of scanPlayerHashes(ctx.redis, workspaceId)) {
      const { line, keys, version } = exportLine(player.userId, player.fields);
      // A hash holding nothing but an expired session and version 0 has nothing to carry over.
      if (keys === 0 && version === 0) continue;
      const text = `${line}\n`;
      stats.players++;
      stats.keys += keys;
      stats.bytes += Buffer.byteLength(text);
      yield text;
    }
    const boards = { boards: 0, entries: 0 };
    for await (const text of boardLines(ctx, workspaceId, boards)) {
      stats.boards = boards.boards;
      stats.boardEntries = boards.entries;
      stats.bytes += Buffer.byteLength(text);
      yield text;
    }
  }
  return { workspaceId, expectedPlayers: totals.players, lines: lines(), stats };
}

export interface LineReport {
  readonly line: number;
  readonly userId?: string;
  readonly code: ErrorCode;
  readonly error: string;
}

export interface ImportSummary {
  readonly workspaceId: string;
  readonly mode: ImportModeOption;
  /** False when mode fail found an existing player or a bad line, and so wrote nothing. */
  complete: boolean;
  /** Lines holding a player or a leaderboard's lines (blank lines are not counted). */
  lines: number;
  /** Written as new players. */
  imported: number;
  /** Existing players replaced (mode overwrite). */
  replaced: number;
  /** Existing players already holding exactly the imported data (a re-run): nothing written. */
  unchanged: number;
  /** Existing players kept (mode skip; in mode fail, found while writing: created since the check). */
  skipped: number;
  /** Lines refused: each has an entry in `errors` (up to ERRORS_KEPT). */
  failed: number;
  /** Players not imported because they were erased (a tombstone in the workspace; docs/erasure.md). */
  erased: number;
  /** Leaderboards loaded, replaced (overwrite) or kept (skip), and the entries loaded. */
  readonly boards: BoardImportCounts;
  readonly errors: LineReport[];
  /** Bytes of NDJSON read. */
  bytes: number;
  ms: number;
}

export interface ImportProgress {
  readonly bytes: number;
  readonly lines: number;
  readonly phase: 'check' | 'write';
}

export interface ImportOptions {
  readonly mode?: string | undefined;
  readonly onProgress?: (progress: ImportProgress) => void;
}

/**
 * Where the NDJSON comes from: a file (read twice in mode fail), or a stream, copied to a temp
 * file first in mode fail or when `spool` is set (an HTTP upload), else read as it comes.
 */
export type ImportSource = { readonly path: string } | { readonly stream: AsyncIterable<Buffer | string>; readonly spool?: boolean };

function lineLimits(ctx: AdminContext): LineLimits {
  return { maxValueDepth: ctx.maxValueDepth, maxKeysPerPlayer: ctx.limits.maxKeysPerPlayer, maxPlayerBytes: ctx.limits.maxPlayerBytes };
}

/** A line may hold a value escaped (`\u0000` is 6 bytes for 1 stored) plus the JSON around it. */
function maxLineBytes(ctx: AdminContext): number {
  return 6 * ctx.limits.maxPlayerBytes + 64 * 1024;
}

function report(summary: ImportSummary, entry: LineReport): void {
  summary.failed++;
  if (summary.errors.length < ERRORS_KEPT) summary.errors.push(entry);
}

/** Each valid player of the source with its line number; bad lines go to the summary. */
async function* players(
  ctx: AdminContext,
  source: AsyncIterable<Buffer | string>,
  summary: ImportSummary,
  phase: ImportProgress['phase'],
  onProgress: ImportOptions['onProgress'],
): AsyncGenerator<{ line: number; player: ImportedPlayer } | { line: number; board: BoardLine }> {
  const limits = lineLimits(ctx);
  let bytes = 0;
  async function* counted(): AsyncGenerator<Buffer | string> {
    for await (const chunk of source) {
      bytes += typeof chunk === 'string' ? Buffer.byteLength(chunk) : chunk.length;
      yield chunk;
    }
  }
  let lastReport = 0;
  for await (const line of ndjsonLines(counted(), maxLineBytes(ctx))) {
    summary.lines++;
    summary.bytes = bytes;
    if (onProgress && summary.lines - lastReport >= 500) {
      lastReport = summary.lines;
      onProgress({ bytes, lines: summary.lines, phase });
    }
    if ('tooLong' in line) {
      report(summary, { line: line.number, code: ErrorCode.PLAYER_TOO_LARGE, error: `line of ${line.tooLong} bytes, longer than any player may be` });
      continue;
    }
    try {
      yield isBoardLine(line.text) ? { line: line.number, board: parseBoardLine(line.text) } : { line: line.number, player: parsePlayerLine(line.text, limits) };
    } catch (err) {
      if (!(err instanceof LineError)) throw err;
      report(summary, { line: line.number, ...(err.userId === undefined ? {} : { userId: err.userId }), code: err.code, error: err.message });
    }
  }
  summary.bytes = bytes;
  onProgress?.({ bytes, lines: summary.lines, phase });
}

function newSummary(workspaceId: string, mode: ImportModeOption): ImportSummary {
  const boards = { imported: 0, replaced: 0, skipped: 0, entries: 0, erased: 0 };
  return { workspaceId, mode, complete: true, lines: 0, imported: 0, replaced: 0, unchanged: 0, skipped: 0, failed: 0, erased: 0, boards, errors: [], bytes: 0, ms: 0 };
}

/** Mode fail's first pass: every line valid and no player present, or nothing is written. */
async function checkNoneExist(ctx: AdminContext, workspaceId: string, path: string, options: ImportOptions, summary: ImportSummary) {
  let batch: Array<{ line: number; userId: string }> = [];
  const flush = async () => {
    const exist = await playersExist(ctx.redis, workspaceId, batch.map((b) => b.userId));
    for (const [i, found] of exist.entries()) {
      if (!found) continue;
      report(summary, { line: batch[i]!.line, userId: batch[i]!.userId, code: ErrorCode.CONFLICT, error: `player ${batch[i]!.userId} exists (mode fail)` });
    }
    batch = [];
  };
  for await (const item of players(ctx, createReadStream(path), summary, 'check', options.onProgress)) {
    if ('board' in item) {
      const problem = await BoardImport.conflict(ctx, workspaceId, item.board);
      if (problem) report(summary, { line: item.line, ...problem });
      continue;
    }
    const { line, player } = item;
    batch.push({ line, userId: player.userId });
    if (batch.length >= CHECK_BATCH) await flush();
  }
  await flush();
}

async function writePlayers(ctx: AdminContext, workspaceId: string, source: AsyncIterable<Buffer | string>, mode: ImportMode, options: ImportOptions, summary: ImportSummary, erased: ErasedFilter) {
  const limits = { maxKeysPerPlayer: ctx.limits.maxKeysPerPlayer, maxPlayerBytes: ctx.limits.maxPlayerBytes };
  let pendingBytes = 0;
  let pendingHistory = 0;
  let pendingPlayers = 0;
  let written = 0;
  const flushTotals = async () => {
    if (pendingBytes === 0 && pendingPlayers === 0 && pendingHistory === 0) return;
    const [bytes, history, count] = [pendingBytes, pendingHistory, pendingPlayers];
    pendingBytes = 0;
    pendingHistory = 0;
    pendingPlayers = 0;
    await addToStorageTotals(ctx.redis, workspaceId, { bytes, history, players: count });
  };
  const inFlight = new Set<Promise<void>>();
  let fatal: unknown;
  const apply = async (line: number, player: ImportedPlayer) => {
    if (await erased.skips(player.userId)) return void summary.erased++;
    const reply = await importPlayer(ctx.redis, workspaceId, player.userId, player.version, player.fields, mode, limits);
    if (reply.applied) {
      pendingBytes += storedBytesOf(reply.storage);
      pendingHistory += reply.storage.historyBytes;
      pendingPlayers += reply.storage.players;
      summary[reply.status]++;
    } else {
      const refused = reply.refusal;
      if (refused.code === ErrorCode.TOO_MANY_KEYS) {
        report(summary, { line, userId: player.userId, code: refused.code, error: `${refused.keys} keys, more than MAX_KEYS_PER_PLAYER (${limits.maxKeysPerPlayer})` });
      } else if (refused.code === ErrorCode.PLAYER_TOO_LARGE) {
        report(summary, { line, userId: player.userId, code: refused.code, error: `${refused.bytes} bytes, more than MAX_PLAYER_BYTES (${limits.maxPlayerBytes})` });
      } else if (refused.code === ErrorCode.SESSION_LOCKED) {
        report(summary, { line, userId: player.userId, code: refused.code, error: `player ${player.userId} is held by a live session of ${refused.owner}: release it, or import again once it ends` });
      } else throw new Error(`unexpected refusal of import-player.lua: ${JSON.stringify(refused)}`);
    }
    if (reply.applied && (reply.status === 'imported' || reply.status === 'replaced')) written++;
    if (written % TOTALS_EVERY === 0 && written > 0) await flushTotals();
  };
  const boards = new BoardImport(ctx, workspaceId, mode === 'overwrite' ? 'overwrite' : 'skip', summary.boards, erased);
  try {
    for await (const item of players(ctx, source, summary, 'write', options.onProgress)) {
      if (fatal !== undefined) break;
      if ('board' in item) {
        // In file order, one at a time: a board's entries follow its config, best first.
        const problem = await boards.apply(item.board);
        if (problem) report(summary, { line: item.line, ...problem });
        continue;
      }
      const { line, player } = item;
      const task: Promise<void> = apply(line, player)
        .catch((err: unknown) => {
          fatal ??= err;
        })
        .finally(() => inFlight.delete(task));
      inFlight.add(task);
      if (inFlight.size >= IMPORT_IN_FLIGHT) await Promise.race(inFlight);
    }
  } finally {
    await Promise.all(inFlight);
    await flushTotals();
  }
  if (fatal !== undefined) throw fatal;
}

/**
 * Imports an export into a workspace. Bad lines are reported by number and nothing of them is
 * written; each good player is written whole or not at all (lua/import-player.lua). Running the
 * same import again after an interruption finishes it: players already written are skipped
 * (skip) or found unchanged (overwrite).
 */
export async function importWorkspace(ctx: AdminContext, workspaceId: string, source: ImportSource, options: ImportOptions = {}): Promise<ImportSummary> {
  const mode = parseImportMode(options.mode);
  await ctx.requireWorkspace(workspaceId);
  const erased = await erasedPlayersFilter(ctx, workspaceId);
  const started = Date.now();
  const summary = newSummary(workspaceId, mode);
  let spool: string | undefined;
  try {
    let path = 'path' in source ? source.path : undefined;
    if (path === undefined && 'stream' in source && (mode === 'fail' || source.spool)) {
      // Kept in a temp file, never in memory: a stream can be read once, and an upload must be
      // received within the HTTP request timeout, however slowly its players are written.
      spool = await mkdtemp(join(tmpdir(), 'pds-import-'));
      path = join(spool, 'players.ndjson');
      await pipeline(source.stream, await createNewFileStream(path));
    }
    if (mode === 'fail') {
      await checkNoneExist(ctx, workspaceId, path!, options, summary);
      if (summary.failed > 0) {
        summary.complete = false;
      } else {
        Object.assign(summary, newSummary(workspaceId, mode));
        await writePlayers(ctx, workspaceId, createReadStream(path!), 'skip', options, summary, erased);
      }
    } else {
      await writePlayers(ctx, workspaceId, path !== undefined ? createReadStream(path) : (source as { stream: AsyncIterable<Buffer | string> }).stream, mode, options, summary, erased);
    }
  } finally {
    summary.ms = Date.now() - started;
    if (spool) await rm(spool, { recursive: true, force: true });
  }
  await ctx.audit('workspace.import', `workspace:${workspaceId}`, {
    workspaceId,
    details: {
      mode,
      complete: summary.complete,
      imported: summary.imported,
      replaced: summary.replaced,
      unchanged: summary.unchanged,
      skipped: summary.skipped,
      failed: summary.failed,
      erased: summary.erased,
    },
  });
  return summary;
}
