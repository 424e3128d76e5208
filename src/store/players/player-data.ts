// Reads and writes players' data: one hash per workspace and player (see keys.ts), each data
// field holding `[updated_at_ms,<JSON>]` (domain/entry.ts), and the player's meta (version, key
// count, bytes, history bytes, session: lua/write-player.lua names them all) under fields that
// start with a NUL byte. A write goes through lua/write-player.lua, which checks the idempotency
// record, the session, the expected version and the limits and keeps the restore points in the
// same atomic step; the session (the player's lock) through lua/player-session.lua. Both run
// through player-scripts.ts and are decoded by script-protocol.ts. A whole player is read by
// lua/read-player.lua, or, when large, by a plain HGETALL on the bulk connection, in turn
// (bulk-reads.ts). Imports are player-transfer.ts's; messages, player-messages.ts's.
import type { Config } from '../../config.js';
import { decodeEntry, type StoredEntry } from '../../domain/entry.js';
import { AppError, ErrorCode } from '../../errors.js';
import { bulkReadGate } from './bulk-reads.js';
import { keys } from '../keys.js';
import { readAtRedisNow } from '../redis/clock.js';
import { nodeOf, type RedisClient } from '../redis/redis.js';
import { runPlayerScript, type KeptReply } from './player-scripts.js';
import {
  decodeReadReply,
  decodeSessionReply,
  decodeWriteReply,
  parseSessionField,
  playerSessionArgs,
  writeLimitsArg,
  writePlayerArgs,
  type LiveSession,
  type PlayerLimits,
  type PlayerWrite,
  type SessionReply,
  type SessionRequest,
  type WriteContext,
  type WriteReply,
} from './script-protocol.js';

export type { KeptReply } from './player-scripts.js';

/** Meta fields of the player hash start with this byte; data keys never do. */
const META = '\0';
const VERSION = '\0v';
const KEY_COUNT = '\0n';
const SESSION = '\0s';
/** Bytes of the player's restore points (lua/write-player.lua). */
const HISTORY_BYTES = '\0h';
/** The meta fields a players list shows for each row (lua/write-player.lua names them all). */
export const PLAYER_META = { version: VERSION, keys: KEY_COUNT, bytes: '\0b', session: SESSION } as const;

/** The limits the player scripts enforce, as config sets them. */
export function playerLimitsOf(config: Pick<Config, 'limits' | 'history' | 'idempotencyTtlSeconds'>): PlayerLimits {
  return {
    maxKeysPerPlayer: config.limits.maxKeysPerPlayer,
    maxPlayerBytes: config.limits.maxPlayerBytes,
    idempotencyTtlSeconds: config.idempotencyTtlSeconds,
    history: config.history,
  };
}

export type GetResult =
  | { readonly found: true; readonly entry: StoredEntry; readonly version: number }
  | { readonly found: false; readonly playerExists: boolean; readonly version: number };

export type ReadAllResult =
  | { readonly complete: true; readonly version: number; readonly entries: Array<[string, StoredEntry]> }
  | { readonly complete: false; readonly version: number; readonly keys: number; readonly bytes: number };

/**
 * A whole player as the inside of its answer's `data` object (`"key":<value JSON>,...`):
 * `members` of them in `body`, text for a small player, Buffers cut from Redis's reply for a
 * large one (values never converted to JS strings; concatenated, the same bytes as the text).
 */
export type ReadAllPartsResult =
  | { readonly complete: true; readonly version: number; readonly members: number; readonly body: string | Buffer[] }
  | { readonly complete: false; readonly version: number; readonly keys: number; readonly bytes: number };

const COMMA = 0x2c;
const OPEN_BRACKET = 0x5b;
const CLOSE_BRACKET = 0x5d;

/**
 * The value JSON of a stored entry `[updated_at_ms,<JSON>]` as a view into the reply's
 * Buffer (decodeEntry's checks, on bytes), or undefined when it is not in the stored form.
 */
export function valueBytesOf(stored: Buffer): Buffer | undefined {
  const comma = stored.indexOf(COMMA);
  if (stored[0] !== OPEN_BRACKET || comma < 2 || stored[stored.length - 1] !== CLOSE_BRACKET) return undefined;
  if (!Number.isSafeInteger(Number(stored.toString('latin1', 1, comma)))) return undefined;
  return stored.subarray(comma + 1, stored.length - 1);
}

function corrupt(key: string): AppError {
  return new AppError(ErrorCode.INTERNAL, `Stored entry "${key}" is not in the stored form`);
}

function decoded(key: string, stored: string): StoredEntry {
  const entry = decodeEntry(stored);
  if (!entry) throw corrupt(key);
  return entry;
}

/** Players up to this size are read whole in one script call; larger ones on the bulk connection. */
export const READ_INLINE_BYTES = 64 * 1024;

export class PlayerDataStore {
  /** The limits argument of every write (writeLimitsArg). */
  private readonly limitsArg: string;
  /** The limits argument for another answer-keeping time (a workspace over its quota keeps answers shorter). */
  private readonly limitsArgs = new Map<number, string>();

  constructor(
    private readonly redis: RedisClient,
    private readonly limits: PlayerLimits,
    /** A connection of its own for reads of large players (the main one when not given). */
    private readonly bulk: RedisClient = redis,
    private readonly bulkReads = bulkReadGate(),
  ) {
    this.limitsArg = writeLimitsArg(limits);
  }

  /** The Redis node that holds the player now ('' on a single server): see nodeOf. */
  nodeOf(workspaceId: string, userId: string): string {
    return nodeOf(this.redis, keys.player(workspaceId, userId));
  }

  async get(workspaceId: string, userId: string, key: string): Promise<GetResult> {
    const hash = keys.player(workspaceId, userId);
    const [stored, version, count] = await this.redis.hmget(hash, key, VERSION, KEY_COUNT);
    if (version === null) {
      // No meta: never written, or written before versions existed (version 1).
      if (stored !== null && stored !== undefined) return { found: true, entry: decoded(key, stored), version: 1 };
      const exists = (await this.redis.exists(hash)) === 1;
      return { found: false, playerExists: exists, version: exists ? 1 : 0 };
    }
    if (stored !== null && stored !== undefined) return { found: true, entry: decoded(key, stored), version: Number(version) };
    return { found: false, playerExists: Number(count) > 0, version: Number(version) };
  }

  /**
   * Every data entry of the player with its version, unless the player holds more than
   * `maxBytes`. A small player takes one script call; a larger one (over READ_INLINE_BYTES) a
   * second call, a plain HGETALL on the bulk connection, in turn (bulk-reads.ts).
   */
  async readAll(
    workspaceId: string,
    userId: string,
    maxBytes = this.limits.maxPlayerBytes,
    /**
     * Called with a large player's size before it is read, and awaited: the byte budget, which
     * throws to refuse and waits for the workspace's heavy turn.
     */
    admit?: (bytes: number) => void | Promise<void>,
  ): Promise<ReadAllResult> {
    const hash = keys.player(workspaceId, userId);
    const reply = decodeReadReply(await this.redis.readPlayer(hash, String(READ_INLINE_BYTES)));
    const { version } = reply;
    if (reply.complete) {
      const entries: Array<[string, StoredEntry]> = [];
      for (let i = 0; i < reply.fields.length; i += 2) {
        const key = reply.fields[i]!;
        entries.push([key, decoded(key, reply.fields[i + 1]!)]);
      }
      return { complete: true, version, entries };
    }
    if (reply.bytes > maxBytes) return { complete: false, version, keys: reply.keys, bytes: reply.bytes };
    await admit?.(reply.bytes);
    // HGETALL holds the meta too, so data and version are read in one step here as well.
    const all = await this.bulkReads.run(workspaceId, () => this.bulk.hgetall(hash));
    const entries: Array<[string, StoredEntry]> = [];
    for (const field of Object.keys(all)) {
      if (PlayerDataStore.isDataField(field)) entries.push([field, decoded(field, all[field]!)]);
    }
    const stored = all[VERSION];
    return { complete: true, version: stored === undefined ? (entries.length > 0 ? 1 : 0) : Number(stored), entries };
  }

  /**
   * readAll for an answer: the same checks and version, but a large player's members are built
   * from Redis's reply Buffers (`HGETALL` as Buffers), each value a subarray of its stored entry,
   * so a 4 MiB player costs copies of bytes rather than string decoding, slicing and joining.
   */
  async readAllParts(
    workspaceId: string,
    userId: string,
    maxBytes = this.limits.maxPlayerBytes,
    /**
     * Called with a large player's size before it is read, and awaited: the byte budget, which
     * throws to refuse and waits for the workspace's heavy turn.
     */
    admit?: (bytes: number) => void | Promise<void>,
  ): Promise<ReadAllPartsResult> {
    const hash = keys.player(workspaceId, userId);
    const reply = decodeReadReply(await this.redis.readPlayer(hash, String(READ_INLINE_BYTES)));
    const { version } = reply;
    if (reply.complete) {
      const members: string[] = [];
      for (let i = 0; i < reply.fields.length; i += 2) {
        const key = reply.fields[i]!;
        members.push(`${JSON.stringify(key)}:${decoded(key, reply.fields[i + 1]!).valueJson}`);
      }
      return { complete: true, version, members: members.length, body: members.join(',') };
    }
    if (reply.bytes > maxBytes) return { complete: false, version, keys: reply.keys, bytes: reply.bytes };
    await admit?.(reply.bytes);
    // HGETALL holds the meta too, so data and version are read in one step. Its fields come as
    // an object's keys (ioredis's, as readAll has them: the same order), its values as Buffers.
    const all = await this.bulkReads.run(workspaceId, () => this.bulk.hgetallBuffer(hash));
    const chunks: Buffer[] = [];
    let members = 0;
    for (const key of Object.keys(all)) {
      if (!PlayerDataStore.isDataField(key)) continue;
      const value = valueBytesOf(all[key]!);
      if (!value) throw corrupt(key);
      chunks.push(Buffer.from(`${members > 0 ? ',' : ''}${JSON.stringify(key)}:`, 'utf8'), value);
      members++;
    }
    const stored = Object.hasOwn(all, VERSION) ? all[VERSION] : undefined;
    const versionOf = stored === undefined ? (members > 0 ? 1 : 0) : Number(stored.toString('latin1'));
    return { complete: true, version: versionOf, members, body: chunks };
  }

  /** Applies a write with lua/write-player.lua; the reply says what happened. */
  async write(workspaceId: string, userId: string, write: PlayerWrite, context: WriteContext): Promise<KeptReply<WriteReply>> {
    const ttl = context.idempotency?.ttlSeconds;
    const limitsArg = ttl === undefined || ttl === this.limits.idempotencyTtlSeconds ? this.limitsArg : this.limitsArgFor(ttl);
    const args = writePlayerArgs(limitsArg, write, context);
    return runPlayerScript(
      this.redis,
      workspaceId,
      userId,
      context.idempotency,
      (idempotencyKey) =>
        this.redis.writePlayer(
          keys.player(workspaceId, userId),
          keys.playerHistory(workspaceId, userId),
          keys.playerHistoryCoarse(workspaceId, userId),
          keys.playerHistoryMeta(workspaceId, userId),
          idempotencyKey,
          keys.playerInbox(workspaceId, userId),
          ...args,
        ),
      decodeWriteReply,
    );
  }

  /** Shortens the answer kept for a player under an idempotency key (kept whole elsewhere: the request's claim). */
  async shortenKeptAnswer(workspaceId: string, userId: string, keyHash: string, ms: number): Promise<void> {
    await this.redis.pexpire(keys.playerIdempotency(workspaceId, userId, keyHash), ms);
  }

  private limitsArgFor(ttlSeconds: number): string {
    let arg = this.limitsArgs.get(ttlSeconds);
    if (arg === undefined) {
      arg = writeLimitsArg(this.limits, ttlSeconds);
      this.limitsArgs.set(ttlSeconds, arg);
    }
    return arg;
  }

  /** Acquires, renews or releases the player's session (lua/player-session.lua). */
  async session(
    workspaceId: string,
    userId: string,
    request: SessionRequest,
    idempotency?: WriteContext['idempotency'],
  ): Promise<KeptReply<SessionReply>> {
    return runPlayerScript(
      this.redis,
      workspaceId,
      userId,
      idempotency,
      (idempotencyKey) =>
        this.redis.playerSession(
          keys.player(workspaceId, userId),
          idempotencyKey,
          keys.playerInbox(workspaceId, userId),
          ...playerSessionArgs(request, idempotency, this.limits.idempotencyTtlSeconds),
        ),
      (raw) => decodeSessionReply(raw, request.action),
    );
  }

  /** The player's version and live session (expired sessions are not shown). */
  async sessionOf(
    workspaceId: string,
    userId: string,
  ): Promise<{ version: number; session: LiveSession | undefined }> {
    const hash = keys.player(workspaceId, userId);
    const [nowMs, fields] = await readAtRedisNow<[Array<string | null>]>(this.redis, (multi) => multi.hmget(hash, VERSION, SESSION));
    const [version, session] = fields;
    const parsed = session ? parseSessionField(session) : undefined;
    const live = parsed && parsed.expiresAtMs > nowMs ? { sessionId: parsed.sessionId, owner: parsed.owner, expiresAtMs: parsed.expiresAtMs } : undefined;
    const versionOf = version !== null && version !== undefined ? Number(version) : (await this.redis.hlen(hash)) > 0 ? 1 : 0;
    return { version: versionOf, session: live };
  }

  /**
   * The player's data fields, version and restore points read in one MULTI (the keys share the
   * player's slot, so this also works on a cluster): the consistent base for rebuilding an older
   * version. `history` holds the fine points' elements, then the coarse ones', newest first
   * (lua/includes/restore-points.lua). Buffers throughout, because history lengths count bytes.
   */
  async snapshot(
    workspaceId: string,
    userId: string,
    /**
     * Called with the bytes the read will move (data and history, from the player's meta), and
     * awaited, before a player over READ_INLINE_BYTES is read: the byte budget, which throws to
     * refuse and waits for the workspace's heavy turn. Such a player is then read on the bulk
     * connection, in turn (bulk-reads.ts). A player written before the meta existed has no sizes
     * and is read as a small one (no tenant can make one: only old versions of the service wrote
     * them).
     */
    admit?: (bytes: number) => void | Promise<void>,
  ): Promise<{ version: number; data: Map<string, Buffer>; history: Buffer[] }> {
    const hash = keys.player(workspaceId, userId);
    let large = false;
    if (admit !== undefined) {
      const [dataBytes, historyBytes] = await this.redis.hmget(hash, PLAYER_META.bytes, HISTORY_BYTES);
      const bytes = Number(dataBytes ?? 0) + Number(historyBytes ?? 0);
      large = bytes > READ_INLINE_BYTES;
      if (large) await admit(bytes);
    }
    const read = (redis: RedisClient) =>
      redis
        .multi()
        .hgetallBuffer(hash)
        .lrangeBuffer(keys.playerHistory(workspaceId, userId), 0, -1)
        .lrangeBuffer(keys.playerHistoryCoarse(workspaceId, userId), 0, -1)
        .exec();
    const replies = await (large ? this.bulkReads.run(workspaceId, () => read(this.bulk)) : read(this.redis));
    const [[errA, all], [errB, fine], [errC, coarse]] = replies as [[Error | null, Record<string, Buffer>], [Error | null, Buffer[]], [Error | null, Buffer[]]];
    if (errA) throw errA;
    if (errB) throw errB;
    if (errC) throw errC;
    const list = [...fine, ...coarse];
    const data = new Map<string, Buffer>();
    for (const [field, value] of Object.entries(all)) if (PlayerDataStore.isDataField(field)) data.set(field, value);
    const stored = all[VERSION];
    // Players written before versions have no version field: 1 when they hold data.
    const version = stored !== undefined ? Number(stored.toString()) : data.size > 0 ? 1 : 0;
    return { version, data, history: list };
  }

  /** The hash's data fields only: meta fields start with a NUL byte. */
  static isDataField(field: string): boolean {
    return !field.startsWith(META);
  }
}
