// Loads every Lua script in lua/ with defineCommand, and turns their negative return codes
// into AppErrors in one place. Command names match the file names in camelCase.
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
  /** Keys a call passes; null when it varies (the call then passes the count first, as EVALSHA takes it). */
  readonly numberOfKeys: number | null;
  readonly lua: string;
  readonly sha1: string;
}

function load(name: string, file: string, numberOfKeys: number | null): ScriptDefinition {
  const lua = readFileSync(new URL(file, `file://${LUA_DIR}`), 'utf8');
  const sha1 = createHash('sha1').update(lua).digest('hex');
  return Object.freeze({ name, file, numberOfKeys, lua, sha1 });
}

export const SCRIPTS: readonly ScriptDefinition[] = Object.freeze([
  load('writePlayer', 'write-player.lua', 3),
  load('playerSession', 'player-session.lua', 2),
  load('readPlayer', 'read-player.lua', 1),
  load('rateLimit', 'rate-limit.lua', 1),
  load('usageAdd', 'usage-add.lua', 1),
  load('touchKeys', 'touch-keys.lua', 2),
  load('hsetExisting', 'hset-existing.lua', 1),
  load('importPlayer', 'import-player.lua', 2),
  // Leaderboards: a variable number of keys, all in one board's slot (numberOfKeys given per call).
  load('boardWrite', 'board-write.lua', null),
  load('boardPage', 'board-page.lua', 2),
  load('boardRank', 'board-rank.lua', 3),
  load('boardRegister', 'board-register.lua', 1),
  load('boardReset', 'board-reset.lua', null),
  load('boardImport', 'board-import.lua', 3),
]);

declare module 'ioredis' {
  interface RedisCommander<Context> {
    writePlayer(
      player: RedisKey,
      history: RedisKey,
      idempotency: RedisKey,
      ...args: string[]
    ): Result<Array<string | number>, Context>;
    playerSession(player: RedisKey, idempotency: RedisKey, ...args: string[]): Result<Array<string | number>, Context>;
    readPlayer(player: RedisKey, maxBytes: string): Result<Array<string | number>, Context>;
    rateLimit(
      windowKey: RedisKey,
      limit: string,
      windowMs: string,
      need: string,
      extra: string,
    ): Result<[granted: number, count: number, ttl: number], Context>;
    usageAdd(usageKey: RedisKey, requests: string, limited: string, ttlSeconds: string): Result<number, Context>;
    hsetExisting(key: RedisKey, ...fieldsAndValues: string[]): Result<number, Context>;
    importPlayer(player: RedisKey, history: RedisKey, ...args: string[]): Result<Array<string | number>, Context>;
    touchKeys(workspaceKey: RedisKey, lastUsedKey: RedisKey, ...keyIdAndMs: string[]): Result<number, Context>;
    boardWrite(numberOfKeys: number, ...keysThenArgs: string[]): Result<Array<string | number>, Context>;
    boardPage(meta: RedisKey, scores: RedisKey, ...args: string[]): Result<Array<string | number>, Context>;
    boardRank(meta: RedisKey, scores: RedisKey, members: RedisKey, ...args: string[]): Result<Array<string | number>, Context>;
    boardRegister(registry: RedisKey, ...args: string[]): Result<[status: number, configOrCount: string | number], Context>;
    boardReset(numberOfKeys: number, ...keysThenArgs: string[]): Result<[removed: number, entriesDelta: number], Context>;
    boardImport(meta: RedisKey, scores: RedisKey, members: RedisKey, ...args: string[]): Result<[number, number, number?], Context>;
  }
}

export function defineScripts(client: Redis | Cluster): void {
  for (const script of SCRIPTS) {
    client.defineCommand(script.name, { lua: script.lua, ...(script.numberOfKeys === null ? {} : { numberOfKeys: script.numberOfKeys }) });
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
} as const;

/** The error code of each script code. */
export const ERROR_OF_SCRIPT_CODE: Readonly<Record<number, ErrorCode>> = {
  [ScriptCode.NOT_A_NUMBER]: ErrorCode.NOT_A_NUMBER,
  [ScriptCode.NUMBER_OUT_OF_RANGE]: ErrorCode.NUMBER_OUT_OF_RANGE,
  [ScriptCode.TOO_MANY_KEYS]: ErrorCode.TOO_MANY_KEYS,
  [ScriptCode.VERSION_CONFLICT]: ErrorCode.VERSION_CONFLICT,
  [ScriptCode.SESSION_LOCKED]: ErrorCode.SESSION_LOCKED,
  [ScriptCode.SESSION_LOST]: ErrorCode.SESSION_LOST,
  [ScriptCode.PLAYER_TOO_LARGE]: ErrorCode.PLAYER_TOO_LARGE,
  [ScriptCode.IDEMPOTENCY_KEY_REUSED]: ErrorCode.IDEMPOTENCY_KEY_REUSED,
};

/** The negative codes of the leaderboard scripts (lua/board-*.lua), named once. */
export const BoardScriptCode = {
  /** Not an error: the board is not in its workspace's registry yet; register, then write again. */
  UNREGISTERED: -1,
  /** Not an error: the board keeps other periods than the caller passed (or, on a read, not the one asked for). */
  PERIODS_CHANGED: -2,
  BOARD_FULL: -3,
  NUMBER_OUT_OF_RANGE: -4,
  /** The same code as the player scripts': the idempotency prologue is one and the same. */
  IDEMPOTENCY_KEY_REUSED: -8,
} as const;

/** The error code of each board script code that is a refusal. */
export const ERROR_OF_BOARD_CODE: Readonly<Record<number, ErrorCode>> = {
  [BoardScriptCode.BOARD_FULL]: ErrorCode.BOARD_FULL,
  [BoardScriptCode.NUMBER_OUT_OF_RANGE]: ErrorCode.NUMBER_OUT_OF_RANGE,
  [BoardScriptCode.IDEMPOTENCY_KEY_REUSED]: ErrorCode.IDEMPOTENCY_KEY_REUSED,
};

/** A reply code no script returns: a bug, answered 500. */
export function unexpectedScriptReply(reply: unknown): AppError {
  return new AppError(ErrorCode.INTERNAL, `Unexpected script reply ${JSON.stringify(reply)}`);
}
