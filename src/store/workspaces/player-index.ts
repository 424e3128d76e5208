// Each workspace's players list: a sorted set (keys.workspacePlayers), user id -> when the player
// was last written, newest highest, so a page of "newest written first" is one ZRANGE however
// many players the workspace has. The write path notes each applied write in memory (one Map
// lookup) and every instance adds its notes to Redis in one script call per workspace every
// PLAYER_INDEX_FLUSH_MS, like keys' last use (auth/last-used.ts); an admin write, rare and
// perhaps from the CLI (no timer), is recorded at once. A crash loses at most one interval's
// notes: those players show again once written again, or after `pds player index`.
//
// A page's rows are read from the players' own hashes (version, keys, bytes, session: the meta
// lua/write-player.lua keeps), for that page's players only.
import { keys } from '../keys.js';
import { PLAYER_META } from '../players/player-data.js';
import { parseSessionField, type LiveSession } from '../players/script-protocol.js';
import { redisNowMs } from '../redis/clock.js';
import { writePaced } from '../redis/paced-writes.js';
import { PendingBatch } from '../redis/pending-batch.js';
import type { RedisClient } from '../redis/redis.js';
import { scanMatching } from '../redis/scan.js';

export interface PlayerRow {
  readonly userId: string;
  /** When the players list last saw it written (ms); null when it is not on the list. */
  readonly lastWriteMs: number | null;
  readonly version: number;
  /** Data keys and their bytes (names and stored entries); null for a player written before these counts existed. */
  readonly keys: number | null;
  readonly bytes: number | null;
  /** The live session (a game server's lock), if any. */
  readonly session: LiveSession | null;
}

/** A position in the list, newest first: the last row shown (its time and user id). */
export interface IndexCursor {
  readonly beforeMs: number;
  readonly userId: string;
}

/**
 * Adds writes (`ms`) and removals (`-ms`) of one workspace: `[userId, ms, userId, ms, ...]`. The
 * history's list (keys.workspaceHistory) takes a removal as a write: the delete opened or
 * recorded into a restore point, which the history sweep must age.
 */
export async function recordPlayerWrites(redis: RedisClient, workspaceId: string, pairs: readonly string[]): Promise<void> {
  if (pairs.length === 0) return;
  const written = pairs.map((value, i) => (i % 2 === 1 ? String(Math.abs(Number(value))) : value));
  await Promise.all([
    redis.indexPlayers(keys.workspace(workspaceId), keys.workspacePlayers(workspaceId), ...pairs),
    redis.indexPlayers(keys.workspace(workspaceId), keys.workspaceHistory(workspaceId), ...written),
  ]);
}

/** The note of one write: its time, or minus it when the write left the player without data. */
export const indexNote = (atMs: number, playersDelta: number): number => (playersDelta < 0 ? -atMs : atMs);

export class PlayerIndexRecorder {
  /** Workspace id -> user id -> the latest note (indexNote). */
  private readonly pending = new PendingBatch<string, Map<string, number>>((taken) => this.write(taken));

  constructor(private readonly redis: RedisClient) {}

  /** Called after each applied write; `playersDelta` is the write's (-1: no data left). */
  note(workspaceId: string, userId: string, atMs: number, playersDelta: number): void {
    const players = this.pending.entry(workspaceId, () => new Map());
    const seen = players.get(userId);
    if (seen === undefined || atMs >= Math.abs(seen)) players.set(userId, indexNote(atMs, playersDelta));
  }

  get size(): number {
    let n = 0;
    for (const players of this.pending.values()) n += players.size;
    return n;
  }

  /** Writes the notes taken since the last flush; what fails is kept for the next one. */
  readonly flush = this.pending.flush;

  private async write(taken: Map<string, Map<string, number>>): Promise<void> {
    const failed: unknown[] = [];
    await writePaced(taken, async ([workspaceId, players]) => {
      const pairs: string[] = [];
      for (const [userId, at] of players) pairs.push(userId, String(at));
      try {
        await recordPlayerWrites(this.redis, workspaceId, pairs);
      } catch (err) {
        failed.push(err);
        for (const [userId, at] of players) this.note(workspaceId, userId, Math.abs(at), at < 0 ? -1 : 0);
      }
    });
    if (failed.length > 0) throw failed[0];
  }

  start(intervalMs: number): void {
    this.pending.start(intervalMs);
  }

  /** Stops the timer and writes what is left. */
  async stop(): Promise<void> {
    await this.pending.stop();
    if (this.size > 0) await this.flush();
  }
}

/** ZSCAN work per call of a prefix search: elements looked at, at most, before it answers. */
export const PREFIX_SCAN_BUDGET = 20_000;
const PREFIX_SCAN_COUNT = 1000;

export class PlayerIndexStore {
  constructor(private readonly redis: RedisClient) {}

  /** How many players the list holds. */
  count(workspaceId: string): Promise<number> {
    return this.redis.zcard(keys.workspacePlayers(workspaceId));
  }

  /**
   * Up to `limit` players, newest written first, after `cursor` (the last row of the page before).
   * A cursor of time and id, not an offset: writes that move players to the top while someone
   * pages do not shift the later pages. Rows with the same time come in descending id order.
   */
  async newest(workspaceId: string, limit: number, cursor?: IndexCursor): Promise<{ userId: string; ms: number }[]> {
    const key = keys.workspacePlayers(workspaceId);
    const out: { userId: string; ms: number }[] = [];
    const top = cursor === undefined ? '+inf' : String(cursor.beforeMs);
    // Rows at the cursor's own time that were shown already are skipped; ties are rare (ms), so
    // this reads at most a few extra.
    for (let offset = 0; out.length < limit; ) {
      const want = limit - out.length + 1;
      const raw = await this.redis.zrange(key, top, '-inf', 'BYSCORE', 'REV', 'LIMIT', offset, want, 'WITHSCORES');
      for (let i = 0; i < raw.length && out.length < limit; i += 2) {
        const userId = raw[i]!;
        const ms = Number(raw[i + 1]);
        if (cursor && ms === cursor.beforeMs && userId >= cursor.userId) continue;
        out.push({ userId, ms });
      }
      if (raw.length < want * 2) break;
      offset += raw.length / 2;
    }
    return out;
  }

  /**
   * Players whose id starts with `prefix`, by ZSCAN MATCH (user ids hold no glob characters):
   * at most PREFIX_SCAN_BUDGET elements looked at per call, so a rare prefix on a million
   * players answers in pages with a `next` cursor ('0' at the end), never one long block. ZSCAN
   * cannot stop inside its batch, so a page may hold more than `limit` (its COUNT starts small
   * and grows only while matches are few, which keeps a common prefix's page near `limit`).
   */
  async matching(workspaceId: string, prefix: string, limit: number, cursor = '0'): Promise<{ found: { userId: string; ms: number }[]; next: string }> {
    const key = keys.workspacePlayers(workspaceId);
    const found: { userId: string; ms: number }[] = [];
    let next = cursor;
    let count = Math.max(10, limit);
    for (let looked = 0; looked < PREFIX_SCAN_BUDGET && found.length < limit; looked += count, count = Math.min(PREFIX_SCAN_COUNT, count * 4)) {
      const [after, raw] = await this.redis.zscan(key, next, 'MATCH', `${prefix}*`, 'COUNT', count);
      for (let i = 0; i < raw.length; i += 2) found.push({ userId: raw[i]!, ms: Number(raw[i + 1]) });
      next = after;
      if (next === '0') break;
    }
    found.sort((a, b) => b.ms - a.ms || (a.userId < b.userId ? 1 : -1));
    return { found, next };
  }

  /** When the list last saw the player written, or null when it is not on the list. */
  async lastWrite(workspaceId: string, userId: string): Promise<number | null> {
    const score = await this.redis.zscore(keys.workspacePlayers(workspaceId), userId);
    return score === null ? null : Number(score);
  }

  /**
   * The rows of these players, read from their hashes in one pipeline (with Redis's clock, for
   * sessions). A listed player without a hash (erased: an instance's batch of notes written
   * after the erasure took it off can put it back) is left out, and taken off the list unless a
   * later write was noted meanwhile.
   */
  async rows(workspaceId: string, players: readonly { userId: string; ms: number | null }[]): Promise<PlayerRow[]> {
    if (players.length === 0) return [];
    const fields = [PLAYER_META.version, PLAYER_META.keys, PLAYER_META.bytes, PLAYER_META.session];
    const [nowMs, ...read] = await Promise.all([
      redisNowMs(this.redis),
      ...players.flatMap((p) => [this.redis.exists(keys.player(workspaceId, p.userId)), this.redis.hmget(keys.player(workspaceId, p.userId), ...fields)]),
    ]);
    const gone = players.filter((p, i) => read[2 * i] === 0 && p.ms !== null);
    if (gone.length > 0) {
      await this.redis.indexPlayers(keys.workspace(workspaceId), keys.workspacePlayers(workspaceId), ...gone.flatMap((p) => [p.userId, String(-p.ms!)]));
    }
    return players.flatMap((p, i) => {
      if (read[2 * i] === 0) return [];
      const [version, count, bytes, session] = read[2 * i + 1] as Array<string | null>;
      const parsed = session ? parseSessionField(session) : undefined;
      return {
        userId: p.userId,
        lastWriteMs: p.ms,
        version: version === null ? 0 : Number(version),
        keys: count === null ? null : Number(count),
        bytes: bytes === null ? null : Number(bytes),
        session: parsed && parsed.expiresAtMs > nowMs ? { sessionId: parsed.sessionId, owner: parsed.owner, expiresAtMs: parsed.expiresAtMs } : null,
      };
    });
  }

  /** Takes the player off the list, and off the history's list beside it (erasure: its history is gone). */
  async forget(workspaceId: string, userId: string): Promise<void> {
    await Promise.all([this.redis.zrem(keys.workspacePlayers(workspaceId), userId), this.redis.zrem(keys.workspaceHistory(workspaceId), userId)]);
  }

  /** Whether the player's hash exists (it may predate the list). */
  async exists(workspaceId: string, userId: string): Promise<boolean> {
    return (await this.redis.exists(keys.player(workspaceId, userId))) === 1;
  }

  /**
   * Adds every player with data to the list, once: for players written before the list existed.
   * SCAN over every master; each player's time is its latest updated_at, computed in Redis
   * (lua/player-last-write.lua). A time the list already has is kept when later (ZADD GT).
   */
  async backfill(workspaceId: string, onProgress?: (seen: number, added: number) => void): Promise<{ seen: number; added: number }> {
    let seen = 0;
    let added = 0;
    await scanMatching(this.redis, keys.playerHashPattern(workspaceId), async (_node, found) => {
      const players = found.filter(keys.isPlayerHash);
      const times = await Promise.all(players.map((key) => this.redis.playerLastWrite(key)));
      const pairs: string[] = [];
      players.forEach((key, i) => {
        if (times[i]! >= 0) pairs.push(keys.playerKeyUserId(workspaceId, key), String(times[i]));
      });
      seen += players.length;
      if (pairs.length > 0) {
        const [changed] = await Promise.all([
          this.redis.indexPlayers(keys.workspace(workspaceId), keys.workspacePlayers(workspaceId), ...pairs),
          this.redis.indexPlayers(keys.workspace(workspaceId), keys.workspaceHistory(workspaceId), ...pairs),
        ]);
        if (changed < 0) throw new Error(`Workspace ${workspaceId} was deleted during the backfill`);
        added += changed;
      }
      onProgress?.(seen, added);
    });
    return { seen, added };
  }
}
