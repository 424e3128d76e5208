// Loads every Lua script in lua/ with defineCommand, with the shared pieces of lua/includes/
// put in place (`--- @include`), and names the player scripts' negative return codes once
// (the leaderboard scripts' are store/boards/board-protocol.ts's). Unwraps the replay that
// every script keeping answers under an Idempotency-Key returns (lua/includes/idempotency.lua).
// Command names match the file names in camelCase.
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import type { Cluster, Redis, RedisKey, Result } from 'ioredis';
import { AppError, ErrorCode } from '../../errors.js';

export const LUA_DIR = fileURLToPath(new URL('../../../lua/', import.meta.url));

export interface ScriptDefinition {
  /** ioredis command name */
  readonly name: string;
  readonly file: string;
  /** Undefined for a script taking any number of keys: its caller passes the count first. */
  readonly numberOfKeys: number | undefined;
  readonly lua: string;
  readonly sha1: string;
}

/** `--- @include "<path under lua/>"` on a line of its own, as bullmq's scripts write it. */
const INCLUDE = /^--- @include "([a-z0-9/-]+\.lua)"[ \t]*$/gm;
/** An included file's own header (the leading `--[[ ... ]]`): documentation, not code. */
const HEADER = /^--\[\[[\s\S]*?\]\]\n?/;

/**
 * A script's text with its includes put in place, each at most once per script (a second
 * include of the same file is dropped, so two includes may share a third). Redis sees one
 * script; the SHA1 is of that text.
 */
export function resolveIncludes(text: string, file: string, seen = new Set<string>()): string {
  return text.replace(INCLUDE, (_line, path: string) => {
    if (seen.has(path)) return `-- (${path} included above)`;
    seen.add(path);
    let included: string;
    try {
      included = readFileSync(new URL(path, `file://${LUA_DIR}`), 'utf8');
    } catch (err) {
      throw new Error(`${file} includes ${path}, which cannot be read: ${(err as Error).message}`, { cause: err });
    }
    return `-- ${path}\n${resolveIncludes(included.replace(HEADER, ''), path, seen).trimEnd()}`;
  });
}

function load(name: string, file: string, numberOfKeys: number | undefined): ScriptDefinition {
  const lua = resolveIncludes(readFileSync(new URL(file, `file://${LUA_DIR}`), 'utf8'), file);
  const sha1 = createHash('sha1').update(lua).digest('hex');
  return Object.freeze({ name, file, numberOfKeys, lua, sha1 });
}

export const SCRIPTS: readonly ScriptDefinition[] = Object.freeze([
  load('writePlayer', 'write-player.lua', 6),
  load('playerSession', 'player-session.lua', 3),
  load('sendMessage', 'send-message.lua', 2),
  load('readPlayer', 'read-player.lua', 1),
  load('rateLimit', 'rate-limit.lua', 1),
  load('usageAdd', 'usage-add.lua', 1),
  load('touchKeys', 'touch-keys.lua', 2),
  load('hsetExisting', 'hset-existing.lua', 1),
  load('importPlayer', 'import-player.lua', 4),
  load('erasePlayerKeys', 'erase-player-keys.lua', undefined),
  load('erasureRequest', 'erasure-request.lua', 5),
  load('erasureTransition', 'erasure-transition.lua', 5),
  load('erasureLease', 'erasure-lease.lua', 1),
  load('setGames', 'set-games.lua', 1),
  load('auditRename', 'audit-rename.lua', 1),
  // Leaderboards: a variable number of keys, all in one board's slot (numberOfKeys given per call).
  load('boardWrite', 'board-write.lua', undefined),
  load('boardPage', 'board-page.lua', 2),
  load('boardRank', 'board-rank.lua', 3),
  load('boardRegister', 'board-register.lua', 1),
  load('boardReset', 'board-reset.lua', undefined),
  load('boardImport', 'board-import.lua', 3),
  load('indexPlayers', 'index-players.lua', 2),
  load('playerLastWrite', 'player-last-write.lua', 1),
  load('historySweep', 'history-sweep.lua', 4),
]);

declare module 'ioredis' {
  interface RedisCommander<Context> {
    writePlayer(
      player: RedisKey,
      history: RedisKey,
      coarseHistory: RedisKey,
      historyMeta: RedisKey,
      idempotency: RedisKey,
      inbox: RedisKey,
      ...args: string[]
    ): Result<Array<string | number>, Context>;
    playerSession(player: RedisKey, idempotency: RedisKey, inbox: RedisKey, ...args: string[]): Result<Array<string | number>, Context>;
    sendMessage(inbox: RedisKey, idempotency: RedisKey, ...args: string[]): Result<Array<string | number>, Context>;
    readPlayer(player: RedisKey, maxBytes: string): Result<Array<string | number>, Context>;
    rateLimit(
      windowKey: RedisKey,
      limit: string,
      windowMs: string,
      need: string,
      extra: string,
      charged?: string,
    ): Result<[granted: number, count: number, ttl: number], Context>;
    usageAdd(usageKey: RedisKey, requests: string, limited: string, ttlSeconds: string): Result<number, Context>;
    hsetExisting(key: RedisKey, ...fieldsAndValues: string[]): Result<number, Context>;
    importPlayer(
      player: RedisKey,
      history: RedisKey,
      coarseHistory: RedisKey,
      historyMeta: RedisKey,
      ...args: string[]
    ): Result<Array<string | number>, Context>;
    touchKeys(workspaceKey: RedisKey, lastUsedKey: RedisKey, ...keyIdAndMs: string[]): Result<number, Context>;
    erasePlayerKeys(
      numberOfKeys: number,
      ...keys: string[]
    ): Result<[deleted: number, dataBytes: number, historyBytes: number, hadData: number, messagesByHour: number[], keptElsewhere: string[]], Context>;
    erasureRequest(
      job: RedisKey,
      stream: RedisKey,
      listing: RedisKey,
      counts: RedisKey,
      notification: RedisKey,
      ...args: string[]
    ): Result<[recorded: number, jobId: string], Context>;
    erasureTransition(
      job: RedisKey,
      stream: RedisKey,
      counts: RedisKey,
      unmapped: RedisKey,
      lease: RedisKey,
      ...args: string[]
    ): Result<number, Context>;
    erasureLease(lease: RedisKey, holder: string, action: 'renew' | 'release', ms: string): Result<number, Context>;
    setGames(games: RedisKey, workspaceId: string, ...gameIds: string[]): Result<[written: number, a: number | string, b: number | string], Context>;
    auditRename(audit: RedisKey, start: string, count: string, ...withinFromTo: string[]): Result<[renamed: number, length: number], Context>;
    boardWrite(numberOfKeys: number, ...keysThenArgs: string[]): Result<Array<string | number>, Context>;
    boardPage(meta: RedisKey, scores: RedisKey, ...args: string[]): Result<Array<string | number>, Context>;
    boardRank(meta: RedisKey, scores: RedisKey, members: RedisKey, ...args: string[]): Result<Array<string | number>, Context>;
    boardRegister(registry: RedisKey, ...args: string[]): Result<[status: number, configOrCount: string | number], Context>;
    boardReset(numberOfKeys: number, ...keysThenArgs: string[]): Result<[removed: number, entriesDelta: number], Context>;
    boardImport(meta: RedisKey, scores: RedisKey, members: RedisKey, ...args: string[]): Result<[number, number, number?], Context>;
    indexPlayers(workspaceKey: RedisKey, playersKey: RedisKey, ...userIdAndMs: string[]): Result<number, Context>;
    historySweep(player: RedisKey, fine: RedisKey, coarse: RedisKey, index: RedisKey, oldestKeptMs: string, shed: string, thin: string): Result<[dropped: number, left: number, work: number], Context>;
    playerLastWrite(player: RedisKey): Result<number, Context>;
  }
}

export function defineScripts(client: Redis | Cluster): void {
  for (const script of SCRIPTS) {
    client.defineCommand(script.name, script.numberOfKeys === undefined ? { lua: script.lua } : { numberOfKeys: script.numberOfKeys, lua: script.lua });
  }
}

/** Defines the scripts on a client that does not have them yet (one made outside createRedis). */
export function ensureScripts(client: Redis | Cluster): void {
  const commands = client as unknown as Record<string, unknown>;
  if (SCRIPTS.some((s) => typeof commands[s.name] !== 'function')) defineScripts(client);
}

/** Loads every script into the script cache of every node, so the first calls need no EVAL. */
export async function preloadScripts(client: Redis | Cluster): Promise<void> {
  const nodes = 'nodes' in client && typeof client.nodes === 'function' ? client.nodes('master') : [client];
  await Promise.all(
    nodes.flatMap((node) => SCRIPTS.map((s) => (node as Redis).script('LOAD', s.lua))),
  );
}

/** True when every script is in the script cache of every master. */
export async function scriptsLoaded(client: Redis | Cluster): Promise<boolean> {
  const nodes = 'nodes' in client && typeof client.nodes === 'function' ? client.nodes('master') : [client];
  const replies = await Promise.all(
    nodes.map((node) => (node as Redis).script('EXISTS', ...SCRIPTS.map((s) => s.sha1)) as Promise<number[]>),
  );
  return replies.every((flags) => flags.every((f) => f === 1));
}

/** The negative codes the player scripts return (lua/write-player.lua), named once. */
export const ScriptCode = {
  NOT_A_NUMBER: -1,
  NUMBER_OUT_OF_RANGE: -2,
  TOO_MANY_KEYS: -3,
  VERSION_CONFLICT: -4,
  SESSION_LOCKED: -5,
  SESSION_LOST: -6,
  PLAYER_TOO_LARGE: -7,
  IDEMPOTENCY_KEY_REUSED: -8,
  STORAGE_QUOTA_EXCEEDED: -9,
  INBOX_FULL: -10,
} as const;

/** A reply code no script returns: a bug, answered 500. */
export function unexpectedScriptReply(reply: unknown): AppError {
  return new AppError(ErrorCode.INTERNAL, `Unexpected script reply ${JSON.stringify(reply)}`);
}

/**
 * A reply of a script that keeps answers under an Idempotency-Key (lua/includes/idempotency.lua):
 * `{ 2, '<first answer as JSON>' }` is a replay of that answer, handed back to be decoded as the
 * first one was; any other reply is handed back as it is.
 */
export function unwrapReplay(raw: ReadonlyArray<string | number>): { reply: ReadonlyArray<string | number>; replayed: boolean } {
  if (raw[0] !== 2) return { reply: raw, replayed: false };
  let first: unknown;
  try {
    first = JSON.parse(String(raw[1]));
  } catch {
    throw unexpectedScriptReply(raw);
  }
  if (!Array.isArray(first)) throw unexpectedScriptReply(raw);
  return { reply: first as ReadonlyArray<string | number>, replayed: true };
}
