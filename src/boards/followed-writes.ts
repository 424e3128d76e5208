// Boards that follow a player key (docs/leaderboards.md, "Boards that follow a player key"):
// every write of a followed key, from any endpoint, puts the stored value on the boards before
// the write is answered, and a crash between the two is mended by any instance within a second.
//
// The player and the boards live in different slots, so no one step can write both. Instead:
//   1. before a write that touches a followed key, an intent goes into a sorted set
//      (keys.followPending, one of 16 shards: the one on the player's own master when there is
//      one, so a healthy player's intent never waits on a failing master; another if it fails),
//      naming the workspace and the player;
//   2. the player's write runs (lua/write-player.lua), as always;
//   3. the boards are brought to the player's stored values: one HMGET of the followed keys and
//      the version (one slot, so they agree), then each board's script with that version
//      (lua/board-write.lua 'f' applies a version only when it is newer than the last applied:
//      calling it twice, late, or out of order changes nothing);
//   4. the intent is removed. The write is answered after step 3.
// An instance that dies between 2 and 4 leaves its intent; every instance sweeps intents older
// than SWEEP_AFTER_MS and repeats step 3 for them until they are old enough that their write
// can no longer land (REMOVE_AFTER_MS past the Redis command timeout), then removes them.
// Step 3 reads the stored state rather than carrying the write's values, so every path (a
// sweep, a retried write, the admin side) is the same code, and a later write mends an earlier
// one.
import { createHash } from 'node:crypto';
import { AppError, ErrorCode } from '../errors.js';
import type { Logger } from '../logger.js';
import { decodeEntry } from '../domain/entry.js';
import type { BoardRegistry } from '../store/boards/board-registry.js';
import type { LeaderboardStore } from '../store/boards/leaderboard-store.js';
import { BOARD_ENTRY_BYTES } from '../store/boards/board-memory.js';
import { FOLLOW_PENDING_SHARDS, keys } from '../store/keys.js';
import type { PlayerWrite } from '../store/players/script-protocol.js';
import type { CacheEvent, EventSubscriber } from '../store/redis/events.js';
import { nodeOf, type RedisClient } from '../store/redis/redis.js';
import { failoverLogOf } from '../store/redis/failover-log.js';

/** Followed key -> the boards that follow it. */
export type Followed = ReadonlyMap<string, readonly string[]>;

export interface FollowedWritesOptions {
  /** Invalidations of the workspaces' follows; without it (the CLI) a follow is reread after CACHE_UNSUBSCRIBED_MS. */
  readonly events?: EventSubscriber | undefined;
  readonly logger?: Logger | undefined;
  /** Entries a board gained (negative: lost), for the workspace's storage total. */
  readonly recordBoardBytes: (workspaceId: string, bytes: number) => void | Promise<unknown>;
  /** The Redis command timeout: an intent is removed only once its write can no longer land. */
  readonly commandTimeoutMs: number;
  readonly now?: () => number;
}

/** An intent older than this is mended by the sweep (the write's own instance is late or gone). */
export const SWEEP_AFTER_MS = 500;
/** How often each instance sweeps. */
export const SWEEP_EVERY_MS = 250;
const SWEEP_BATCH = 200;
/** Without invalidations, how long a workspace's follows are trusted. */
const CACHE_UNSUBSCRIBED_MS = 1000;
/** With them, a safety net all the same. */
const CACHE_MAX_MS = 60_000;
/**
 * An entry past its time stands in for a refresh Redis cannot answer (the workspace's master
 * failing over) while it is younger than this, and then for a second at a time, as the key
 * cache's entries do (src/auth/authenticator.ts): no invalidation dropped it.
 */
const STAND_IN_MAX_MS = 2 * CACHE_MAX_MS;
const STAND_IN_RETRY_MS = 1000;

interface FollowedEntry {
  /** When it was read from Redis. */
  readonly readAt: number;
  /** Until when it is used without asking Redis (while invalidations arrive). */
  readonly freshUntil: number;
  /** A refresh failed and it stood in: answered at once until a refresh works. */
  readonly standingIn?: true;
  readonly followed: Map<string, string[]>;
}

export interface FollowIntent {
  readonly workspaceId: string;
  readonly userId: string;
  readonly followed: Followed;
  readonly member: string;
  /** The shard's key it was written to. */
  readonly key: string;
}

/** A write refused before it was sent: its turn refused (429), or its node not answering (503, nothing sent). */
function notSent(err: unknown): boolean {
  return err instanceof AppError && (err.code === ErrorCode.RATE_LIMITED || err.code === ErrorCode.STORAGE_UNAVAILABLE);
}

/** Shards tried for one intent before its write fails. */
const INTENT_TRIES = 3;
/**
 * A shard whose write failed is tried last for this long; a board whose write failed is left to
 * the sweep as long (the writes of its master's other boards too), rather than each write of
 * the key waiting for the failure again.
 */
const REST_MS = 2000;

/** The data keys a write may change: its ops' keys, or every key for a delete of all. */
export function keysTouched(write: PlayerWrite): readonly string[] | 'all' {
  return write.deleteAll ? 'all' : write.ops.map((op) => op.key);
}

export class FollowedWrites {
  private readonly cache = new Map<string, FollowedEntry>();
  /** Shard -> until when it is tried last (its write failed). */
  private readonly resting = new Map<number, number>();
  /** A board's master (host:port) -> until when its boards are left to the sweep (a write failed). */
  private readonly restingNodes = new Map<string, number>();
  private readonly now: () => number;
  private timer: NodeJS.Timeout | undefined;
  private sweeping: Promise<unknown> | undefined;
  private readonly onEvent = (event: CacheEvent) => {
    // A new workspace has no follows that could be stale: its creation event drops nothing.
    if (event.type === 'workspace' && event.created !== true) this.cache.delete(event.workspaceId);
  };
  /** Invalidations may have been missed: every entry is read again, standing in meanwhile. */
  private readonly onReset = () => {
    for (const [id, entry] of this.cache) this.cache.set(id, { ...entry, freshUntil: 0 });
  };

  constructor(
    private readonly redis: RedisClient,
    private readonly registry: BoardRegistry,
    private readonly boards: LeaderboardStore,
    private readonly options: FollowedWritesOptions,
  ) {
    this.now = options.now ?? Date.now;
    options.events?.on('event', this.onEvent);
    options.events?.on('reset', this.onReset);
  }

  /** The workspace's followed keys and their boards (cached; a follow change publishes a workspace event). */
  async followedIn(workspaceId: string): Promise<Map<string, string[]>> {
    const cached = this.cache.get(workspaceId);
    const live = this.options.events?.live === true;
    const now = this.now();
    if (cached && now < cached.freshUntil && (live || now - cached.readAt < CACHE_UNSUBSCRIBED_MS)) return cached.followed;
    // Standing in (a refresh failed): answered at once, the next refresh tried behind it.
    if (cached?.standingIn === true && live && now - cached.readAt < STAND_IN_MAX_MS) {
      this.cache.set(workspaceId, { ...cached, freshUntil: now + STAND_IN_RETRY_MS });
      this.readFollowed(workspaceId, now).catch(() => undefined);
      return cached.followed;
    }
    return this.readFollowed(workspaceId, now);
  }

  /** Reads the workspace's follows from Redis and caches them; the entry past its time may stand in. */
  private async readFollowed(workspaceId: string, now: number): Promise<Map<string, string[]>> {
    let boards: Awaited<ReturnType<BoardRegistry['list']>>;
    try {
      boards = await this.registry.list(workspaceId);
    } catch (err) {
      // Read again now: an invalidation that arrived meanwhile dropped it.
      const standIn = this.cache.get(workspaceId);
      const at = this.now();
      if (standIn === undefined || !this.options.events?.live || at - standIn.readAt >= STAND_IN_MAX_MS) throw err;
      this.cache.set(workspaceId, { ...standIn, freshUntil: at + STAND_IN_RETRY_MS, standingIn: true });
      return standIn.followed;
    }
    const followed = new Map<string, string[]>();
    for (const board of boards) {
      if (board.follow) followed.set(board.follow.key, [...(followed.get(board.follow.key) ?? []), board.board]);
    }
    this.cache.set(workspaceId, { readAt: now, freshUntil: now + CACHE_MAX_MS, followed });
    return followed;
  }

  /**
   * Step 1: when the write may change a followed key, records the intent (before the write is
   * sent) and answers it; undefined when no board follows what it touches.
   */
  async intent(workspaceId: string, userId: string, touched: readonly string[] | 'all', nowMs: number): Promise<FollowIntent | undefined> {
    const all = await this.followedIn(workspaceId);
    if (all.size === 0) return undefined;
    const followed = touched === 'all' ? all : new Map([...all].filter(([key]) => touched.includes(key)));
    if (followed.size === 0) return undefined;
    const member = JSON.stringify([workspaceId, userId, nowMs, Math.random().toString(36).slice(2, 10)]);
    let failure: unknown;
    for (const shard of this.shardsFor(workspaceId, userId).slice(0, INTENT_TRIES)) {
      const key = keys.followPending(shard);
      try {
        await this.redis.zadd(key, this.now(), member);
        return { workspaceId, userId, followed, member, key };
      } catch (err) {
        // It may have been written all the same (a timeout): the sweep mends and removes it.
        failure = err;
        this.resting.set(shard, this.now() + REST_MS);
      }
    }
    throw failure;
  }

  /**
   * The shards to try for a player's intent, in order: those on the player's own master first
   * (a player whose master answers never waits on another), from a place its ids pick so that
   * the players spread over them; shards whose write failed lately last.
   */
  shardsFor(workspaceId: string, userId: string): number[] {
    const start = createHash('sha1').update(`${workspaceId}\0${userId}`).digest().readUInt32BE(0) % FOLLOW_PENDING_SHARDS;
    const order = Array.from({ length: FOLLOW_PENDING_SHARDS }, (_, i) => (start + i) % FOLLOW_PENDING_SHARDS);
    const own = nodeOf(this.redis, keys.player(workspaceId, userId));
    const now = this.now();
    const rank = order.map((shard) => ((this.resting.get(shard) ?? 0) > now ? 2 : 0) + (own !== '' && nodeOf(this.redis, keys.followPending(shard)) !== own ? 1 : 0));
    // A stable sort: the order from `start` is kept within each rank.
    return order.map((shard, i) => ({ shard, rank: rank[i]! })).sort((a, b) => a.rank - b.rank).map((s) => s.shard);
  }

  /**
   * Steps 1 to 4 around one player write (`run`): what every path that writes a player calls.
   * `run` takes the workspace's turn for the player's script alone (saves/player-writes.ts): the
   * intent and the boards are other keys, often on other nodes, and a workspace's writes to one
   * node waited on each other's boards too. A write refused before it was sent drops its intent;
   * one that throws otherwise leaves it for the sweep (it may have been applied).
   */
  async around<T>(workspaceId: string, userId: string, write: PlayerWrite, nowMs: number, run: () => Promise<T>, applied: (result: T) => boolean): Promise<T> {
    const intent = await this.intent(workspaceId, userId, keysTouched(write), nowMs);
    let result: T;
    try {
      result = await run();
    } catch (err) {
      if (err instanceof AppError) await this.conclude(intent, err, nowMs, applied);
      throw err;
    }
    await this.conclude(intent, result, nowMs, applied);
    return result;
  }

  /**
   * Steps 3 and 4 once the write answered (`result`) or was refused (an AppError): the boards
   * brought to the stored values when it was applied; the intent dropped when it was not, or
   * was never sent; left for the sweep when it may have been applied.
   */
  private async conclude<T>(intent: FollowIntent | undefined, result: T | AppError, nowMs: number, applied: (result: T) => boolean): Promise<void> {
    if (intent === undefined) return;
    if (result instanceof AppError) {
      if (notSent(result)) await this.drop(intent);
    } else await (applied(result) ? this.settle(intent, nowMs) : this.drop(intent));
  }

  /**
   * around() for the players of one request: their intents first, side by side; `run` writes the
   * players whose intent was written (their indexes; an outcome or a refusal each); then each
   * intent settled, dropped or left as around() does, side by side. A player whose intent could
   * not be written is not written: its outcome is that failure as `failure` reads it (a storage
   * failure, that player's alone), or it is thrown.
   */
  async aroundEach<T>(
    workspaceId: string,
    writes: ReadonlyArray<{ readonly userId: string; readonly write: PlayerWrite }>,
    nowMs: number,
    run: (indexes: readonly number[]) => Promise<Array<T | AppError>>,
    applied: (result: T) => boolean,
    failure: (err: unknown) => AppError | undefined,
  ): Promise<Array<T | AppError>> {
    const intents = await Promise.allSettled(writes.map((w) => this.intent(workspaceId, w.userId, keysTouched(w.write), nowMs)));
    const results = new Array<T | AppError>(writes.length);
    const written: number[] = [];
    for (const [i, settled] of intents.entries()) {
      if (settled.status === 'fulfilled') {
        written.push(i);
        continue;
      }
      const refused = failure(settled.reason);
      if (refused === undefined) throw settled.reason;
      results[i] = refused;
    }
    const ran = written.length > 0 ? await run(written) : [];
    written.forEach((i, j) => (results[i] = ran[j]!));
    await Promise.all(
      written.map((i) => this.conclude((intents[i] as PromiseFulfilledResult<FollowIntent | undefined>).value, results[i]!, nowMs, applied)),
    );
    return results;
  }

  /**
   * Steps 3 and 4, once the write was applied (or replayed): the boards brought to the stored
   * values, then the intent removed. A board that cannot be written now is left to the sweep;
   * the write's answer does not wait for it.
   */
  async settle(intent: FollowIntent, nowMs: number): Promise<void> {
    if (this.boardsResting(intent.workspaceId, intent.followed)) return;
    try {
      await this.mend(intent.workspaceId, intent.userId, intent.followed, nowMs);
      await this.redis.zrem(intent.key, intent.member);
    } catch (err) {
      const logger = this.options.logger;
      if (logger && !failoverLogOf(logger).note(err, { workspaceId: intent.workspaceId }, 'a followed board was not updated; the sweep will')) {
        logger.warn({ err: (err as Error).message, workspaceId: intent.workspaceId }, 'a followed board was not updated; the sweep will');
      }
    }
  }

  /** Whether a board of these is on a master whose board write failed lately (see REST_MS). */
  private boardsResting(workspaceId: string, followed: Followed): boolean {
    if (this.restingNodes.size === 0) return false;
    const now = this.now();
    for (const [node, until] of this.restingNodes) if (until <= now) this.restingNodes.delete(node);
    for (const boards of followed.values()) {
      for (const board of boards) {
        const until = this.restingNodes.get(nodeOf(this.redis, keys.boardFollowed(workspaceId, board)));
        if (until !== undefined && until > now) return true;
      }
    }
    return false;
  }

  /** A write refused by its script changed nothing: its intent goes at once. */
  async drop(intent: FollowIntent): Promise<void> {
    await this.redis.zrem(intent.key, intent.member).catch(() => undefined);
  }

  /** Step 3 for one player: each followed key's stored value put on its boards, with the player's version. */
  async mend(workspaceId: string, userId: string, followed: Followed, nowMs: number): Promise<void> {
    const names = [...followed.keys()];
    if (names.length === 0) return;
    const [version, ...stored] = await this.redis.hmget(keys.player(workspaceId, userId), '\0v', ...names);
    const at = Number(version ?? 0);
    await Promise.all(
      names.flatMap((key, i) => {
        const entry = stored[i] == null ? undefined : decodeEntry(stored[i]!);
        const valueJson = entry ? entry.valueJson : null;
        return followed.get(key)!.map(async (board) => {
          let reply: Awaited<ReturnType<LeaderboardStore['applyFollowed']>>;
          try {
            reply = await this.boards.applyFollowed(workspaceId, board, userId, valueJson, at, nowMs);
          } catch (err) {
            // On a cluster: its master's boards are left to the sweep for a while.
            const node = nodeOf(this.redis, keys.boardFollowed(workspaceId, board));
            if (node !== '') this.restingNodes.set(node, this.now() + REST_MS);
            throw err;
          }
          if (reply.status === 'refused') {
            // A board full (LEADERBOARD_MAX_ENTRIES), or a value out of range: the player's
            // write stands, the board keeps what it had. Said once, not retried.
            this.options.logger?.warn({ workspaceId, board, code: reply.refusal.code }, 'a followed board refused a value');
          } else if (reply.entriesDelta !== 0) {
            await this.options.recordBoardBytes(workspaceId, reply.entriesDelta * BOARD_ENTRY_BYTES);
          }
        });
      }),
    );
  }

  /**
   * One sweep: intents older than SWEEP_AFTER_MS mended; those that can no longer be joined by
   * their write removed. Every shard (and the key of the release before); a shard that fails
   * (its master failing over) does not hold up the others, and the first failure is thrown
   * once they are done. Answers how many it mended.
   */
  async sweep(): Promise<number> {
    const swept = await Promise.allSettled(keys.followPendingAll().map((key) => this.sweepShard(key)));
    const failed = swept.find((s): s is PromiseRejectedResult => s.status === 'rejected');
    if (failed) throw failed.reason;
    return swept.reduce((sum, s) => sum + (s.status === 'fulfilled' ? s.value : 0), 0);
  }

  private async sweepShard(key: string): Promise<number> {
    const now = this.now();
    const due = await this.redis.zrangebyscore(key, '-inf', now - SWEEP_AFTER_MS, 'WITHSCORES', 'LIMIT', 0, SWEEP_BATCH);
    let mended = 0;
    let failure: { err: unknown } | undefined;
    for (let i = 0; i < due.length; i += 2) {
      const member = due[i]!;
      const at = Number(due[i + 1]);
      let parsed: unknown;
      try {
        parsed = JSON.parse(member);
      } catch {
        parsed = undefined;
      }
      if (!Array.isArray(parsed) || typeof parsed[0] !== 'string' || typeof parsed[1] !== 'string') {
        await this.redis.zrem(key, member);
        continue;
      }
      const [workspaceId, userId, nowMs] = parsed as [string, string, number];
      // One intent that cannot be mended now (its board's master failing over) holds up no other.
      try {
        const followed = await this.followedIn(workspaceId);
        if (this.boardsResting(workspaceId, followed)) continue;
        await this.mend(workspaceId, userId, followed, Number(nowMs) || now);
      } catch (err) {
        failure ??= { err };
        continue;
      }
      mended++;
      // Removed only once its write, if it is still on the way, would have timed out: until then
      // each sweep mends it again (a write that lands late is put on the boards by the next one).
      if (now - at > this.options.commandTimeoutMs + SWEEP_AFTER_MS) await this.redis.zrem(key, member);
    }
    if (failure) throw failure.err;
    return mended;
  }

  start(everyMs = SWEEP_EVERY_MS): void {
    this.timer = setInterval(() => {
      if (this.sweeping) return;
      this.sweeping = this.sweep()
        .catch((err: unknown) => {
          // A failover's failures are counted and logged a line per kind a second (failover-log.ts).
          const logger = this.options.logger;
          if (logger && !failoverLogOf(logger).note(err, {}, 'the followed boards sweep failed; next time')) {
            logger.warn({ err: (err as Error).message }, 'the followed boards sweep failed; next time');
          }
        })
        .finally(() => {
          this.sweeping = undefined;
        });
    }, everyMs);
    this.timer.unref();
  }

  async stop(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    this.timer = undefined;
    this.options.events?.off('event', this.onEvent);
    this.options.events?.off('reset', this.onReset);
    await this.sweeping;
  }
}
