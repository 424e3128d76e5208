// Whole-workspace reads and writes of players for export and import (admin/workspace-transfer.ts):
// every player hash of a workspace walked with SCAN on every master, each read with one HGETALL
// (one atomic command: data and version from the same moment), a bounded number of bytes in
// flight; and each imported player written in its own slot by lua/import-player.lua.
import { keys } from '../keys.js';
import type { RedisClient } from '../redis/redis.js';
import { masters, SCAN_PAGE } from '../redis/scan.js';
import { decodeImportReply, importPlayerArgs, type ImportMode, type ImportReply } from './script-protocol.js';

export type { ImportMode } from './script-protocol.js';

/** Bytes of players read in one pipeline: bounds the export's memory whatever the players' sizes. */
export const EXPORT_CHUNK_BYTES = 8 * 1024 * 1024;
/** Size assumed for a player written before versions existed (it has no byte count). */
const UNKNOWN_SIZE = 1024 * 1024;

export interface PlayerHash {
  readonly userId: string;
  /** HGETALL as Redis answered it: field, value, ... in the hash's own order, meta included. */
  readonly fields: string[];
}

/**
 * Every player hash of the workspace, a page of SCAN at a time on each master, read in
 * pipelines of at most EXPORT_CHUNK_BYTES (by the players' own byte counts, \0b). Pulling is
 * the backpressure: nothing more is read until the consumer asks for the next player.
 * A player written or deleted during the walk may or may not be seen (SCAN's guarantee).
 */
export async function* scanPlayerHashes(redis: RedisClient, workspaceId: string): AsyncGenerator<PlayerHash> {
  const pattern = keys.playerHashPattern(workspaceId);
  for (const node of masters(redis)) {
    let cursor = '0';
    do {
      const [next, found] = await node.scan(cursor, 'MATCH', pattern, 'COUNT', SCAN_PAGE);
      cursor = next;
      const hashes = found.filter(keys.isPlayerHash);
      if (hashes.length === 0) continue;
      const sizes = (await node.pipeline(hashes.map((key) => ['hget', key, '\0b'])).exec()) ?? [];
      let chunk: string[] = [];
      let chunkBytes = 0;
      const chunks: string[][] = [];
      for (const [i, key] of hashes.entries()) {
        const [err, size] = sizes[i] ?? [null, null];
        if (err) throw err;
        const bytes = size === null ? UNKNOWN_SIZE : Number(size);
        if (chunk.length > 0 && chunkBytes + bytes > EXPORT_CHUNK_BYTES) {
          chunks.push(chunk);
          chunk = [];
          chunkBytes = 0;
        }
        chunk.push(key);
        chunkBytes += bytes;
      }
      chunks.push(chunk);
      for (const keysOfChunk of chunks) {
        // call('HGETALL') answers the flat array: ioredis's hgetall() makes an object, whose
        // integer-like keys would come first instead of in the hash's own order.
        const pipeline = node.pipeline();
        for (const key of keysOfChunk) pipeline.call('HGETALL', key);
        const replies = (await pipeline.exec()) ?? [];
        for (const [i, key] of keysOfChunk.entries()) {
          const [err, fields] = replies[i] ?? [null, []];
          if (err) throw err;
          // Gone since SCAN saw it (deleted meanwhile): not a player any more.
          if ((fields as string[]).length === 0) continue;
          yield { userId: keys.playerKeyUserId(workspaceId, key), fields: fields as string[] };
        }
      }
    } while (cursor !== '0');
  }
}

/** Imports one player in its own slot (lua/import-player.lua); the reply says what happened. */
export async function importPlayer(
  redis: RedisClient,
  workspaceId: string,
  userId: string,
  version: number,
  fields: readonly string[],
  mode: ImportMode,
  limits: { readonly maxKeysPerPlayer: number; readonly maxPlayerBytes: number },
): Promise<ImportReply> {
  const raw = await redis.importPlayer(
    keys.player(workspaceId, userId),
    keys.playerHistory(workspaceId, userId),
    keys.playerHistoryCoarse(workspaceId, userId),
    keys.playerHistoryMeta(workspaceId, userId),
    ...importPlayerArgs(mode, version, limits, fields),
  );
  return decodeImportReply(raw);
}

/**
 * Which of these players exist (hold at least one data key), for an import that must write
 * nothing when any does. Each player is its own command (on a cluster, in its own slot's node;
 * the client pipelines them).
 */
export async function playersExist(redis: RedisClient, workspaceId: string, userIds: readonly string[]): Promise<boolean[]> {
  return Promise.all(
    userIds.map(async (userId) => {
      const hash = keys.player(workspaceId, userId);
      const [version, count] = await redis.hmget(hash, '\0v', '\0n');
      // Without meta the hash predates versions and every field is data.
      return version === null ? (await redis.hlen(hash)) > 0 : Number(count) > 0;
    }),
  );
}
