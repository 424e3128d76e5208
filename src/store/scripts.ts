// Loads every Lua script in lua/ with defineCommand, and turns their negative return codes
// into AppErrors in one place. Command names match the file names in camelCase.
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import type { Cluster, Redis, RedisKey, Result } from 'ioredis';
import { AppError, ErrorCode } from '../errors.js';

export const LUA_DIR = fileURLToPath(new URL('../../lua/', import.meta.url));

export interface ScriptDefinition {
  /** ioredis command name */
  readonly name: string;
  readonly file: string;
  readonly numberOfKeys: number;
  readonly lua: string;
  readonly sha1: string;
}

function load(name: string, file: string, numberOfKeys: number): ScriptDefinition {
  const lua = readFileSync(new URL(file, `file://${LUA_DIR}`), 'utf8');
  const sha1 = createHash('sha1').update(lua).digest('hex');
  return Object.freeze({ name, file, numberOfKeys, lua, sha1 });
}

export const SCRIPTS: readonly ScriptDefinition[] = Object.freeze([
  load('incrementEntry', 'increment-entry.lua', 1),
  load('setEntry', 'set-entry.lua', 1),
  load('rateLimit', 'rate-limit.lua', 1),
  load('usageAdd', 'usage-add.lua', 1),
  load('touchKeys', 'touch-keys.lua', 2),
  load('hsetExisting', 'hset-existing.lua', 1),
]);

declare module 'ioredis' {
  interface RedisCommander<Context> {
    incrementEntry(
      key: RedisKey,
      field: string,
      amount: string,
      defaultValue: string,
      updatedAtMs: string,
      maxEntries: string,
    ): Result<string | number, Context>;
    setEntry(key: RedisKey, field: string, stored: string, maxEntries: string): Result<number, Context>;
    rateLimit(
      windowKey: RedisKey,
      limit: string,
      windowMs: string,
      need: string,
      extra: string,
    ): Result<[granted: number, count: number, ttl: number], Context>;
    usageAdd(usageKey: RedisKey, requests: string, limited: string, ttlSeconds: string): Result<number, Context>;
    hsetExisting(key: RedisKey, ...fieldsAndValues: string[]): Result<number, Context>;
    touchKeys(workspaceKey: RedisKey, lastUsedKey: RedisKey, ...keyIdAndMs: string[]): Result<number, Context>;
  }
}

export function defineScripts(client: Redis | Cluster): void {
  for (const script of SCRIPTS) {
    client.defineCommand(script.name, { numberOfKeys: script.numberOfKeys, lua: script.lua });
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

/** The negative codes the scripts return, named once. */
export const ScriptCode = {
  NOT_A_NUMBER: -1,
  NOT_FINITE: -2,
  TOO_MANY_ENTRIES: -3,
} as const;

export function scriptError(code: number, context: { maxEntries: number }): AppError {
  switch (code) {
    case ScriptCode.NOT_A_NUMBER:
      return new AppError(ErrorCode.NOT_A_NUMBER, 'Stored value is not a number');
    case ScriptCode.NOT_FINITE:
      return new AppError(ErrorCode.NUMBER_OUT_OF_RANGE, 'Increment would leave the finite number range');
    case ScriptCode.TOO_MANY_ENTRIES:
      return new AppError(
        ErrorCode.TOO_MANY_KEYS,
        `Player already has the maximum of ${context.maxEntries} keys; delete one first`,
      );
    default:
      return new AppError(ErrorCode.INTERNAL, `Unexpected script result ${code}`);
  }
}
