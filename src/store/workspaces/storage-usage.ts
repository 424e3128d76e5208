// Each workspace's stored bytes and players with data. Everything a workspace makes Redis keep
// is counted here, in three parts of one hash (keys.workspaceStorage):
//   bytes    players' data and history, from the player scripts' deltas (lua/write-player.lua);
//            recounted from the players themselves when deltas may have been lost (reconcile)
//   history  the part of `bytes` that is history (restore points): the quota refuses data only,
//            and history keeps within its own bound (saves/history-sweep.ts)
//   boards   leaderboard entries (store/boards/)
//   kept:<h> answers kept for Idempotency-Keys, and msg:<h> messages waiting for players, by
//            the UTC hour they expire in (h = ms / 3,600,000): they expire by themselves, so an
//            hour's bytes count until that hour has passed; one removed early (a message
//            acknowledged) is taken off its hour
//   ses:<m>  players held by a session before they have any data (lua/player-session.lua), by
//            the UTC minute their hash has surely expired in (m = ms / 60,000: the lease's end
//            and its 60 s margin): a lapsed lease leaves the totals once that minute has
//            passed, a release or the player's first data take it off its minute at once
// A workspace's total cannot be updated in the same step as a player's write, since on a cluster
// the player lives in another slot. So each instance adds its deltas up in memory and writes them
// to the workspace's hash every STORAGE_FLUSH_MS (HINCRBY, paced like the usage counts), and
// learns the total from the reply. What an instance knows of a total is the total Redis last
// told it plus its own deltas since: exact with one instance, behind by the other instances'
// last interval with several.
import { keys } from '../keys.js';
import { writePaced } from '../redis/paced-writes.js';
import { PendingBatch } from '../redis/pending-batch.js';
import { isUnavailableError, type RedisClient } from '../redis/redis.js';
import { sumPlayerSizes } from '../players/player-sizes.js';

/** How long past their refresh a workspace's known totals still serve while Redis cannot be read (a failover takes a few seconds). */
export const STALE_TOTALS_MS = 30_000;

/** The Redis error under an AppError (STORAGE_UNAVAILABLE wraps it), or the error itself. */
function unavailableCause(err: unknown): unknown {
  return err instanceof Error && err.cause !== undefined && !isUnavailableError(err) ? err.cause : err;
}

export interface StorageTotals {
  /** Everything counted: the players' bytes, the leaderboards', the kept answers' and the messages'. */
  readonly bytes: number;
  readonly players: number;
  /** The part of `bytes` that is players' history (restore points): not refused by the quota. */
  readonly historyBytes: number;
  /** The parts of `bytes` that are not players' data and history. */
  readonly boardBytes: number;
  readonly keptBytes: number;
  readonly messageBytes: number;
  /** Players held by sessions before they have any data: their hashes' Redis bytes (lua/includes/session.lua). */
  readonly sessionBytes: number;
}

/** Bytes by the UTC minute (ms since the epoch / 60,000) they expire in. */
export type ByExpiryMinute = ReadonlyMap<number, number>;

/** Bytes by the UTC hour (ms since the epoch / 3,600,000) they expire in. */
export type ByExpiryHour = ReadonlyMap<number, number>;

/** What one write (or a flush of many) adds to a workspace's totals. */
export interface StorageChange {
  /** Players' data and history. */
  readonly bytes?: number;
  /** The part of `bytes` that is history. */
  readonly history?: number;
  readonly players?: number;
  readonly boards?: number;
  /** Answers kept for Idempotency-Keys, by the hour they expire in. */
  readonly kept?: ByExpiryHour;
  /** Messages waiting for players, by the hour they expire in (negative: acknowledged). */
  readonly messages?: ByExpiryHour;
  /** Players held without data, by the minute their hash has surely expired in (negative: released, or given data). */
  readonly sessions?: ByExpiryMinute;
}

const HOUR_MS = 3_600_000;
const KEPT = 'kept:';
const MESSAGES = 'msg:';
const SESSIONS = 'ses:';
export const expiryHourOf = (expiresAtMs: number) => Math.floor(expiresAtMs / HOUR_MS);
const MINUTE_MS = 60_000;
/** The UTC minute a time falls in (ms / 60,000): the buckets of players held without data. */
export const expiryMinuteOf = (expiresAtMs: number) => Math.floor(expiresAtMs / MINUTE_MS);

interface Known {
  totals: StorageTotals;
  /** When Redis last told us the total. */
  at: number;
  /**
   * The totals were read after this instance's flush of the workspace had been sent and before
   * its answer came: they already hold the deltas that flush carries (one connection answers
   * in order), which must then not be counted again from `flushing`.
   */
  holdsFlushing?: boolean;
}

interface Pending {
  bytes: number;
  history: number;
  players: number;
  boards: number;
  kept: Map<number, number>;
  messages: Map<number, number>;
  sessions: Map<number, number>;
}

const emptyPending = (): Pending => ({ bytes: 0, history: 0, players: 0, boards: 0, kept: new Map(), messages: new Map(), sessions: new Map() });

const addTo = (into: Map<number, number>, hour: number, bytes: number) => into.set(hour, (into.get(hour) ?? 0) + bytes);

/** `[minute, bytes]` changes summed by minute (a renew takes off and adds in the same minute). */
export function byMinute(changes: Iterable<readonly [minute: number, bytes: number]> = []): Map<number, number> {
  const summed = new Map<number, number>();
  for (const [minute, bytes] of changes) addTo(summed, minute, bytes);
  return summed;
}

/** The totals of a storage hash's fields at `nowMs`: expiring bytes of hours not yet past only. */
function totalsOf(fields: Record<string, string>, nowMs: number): { totals: StorageTotals; expired: string[] } {
  const thisHour = expiryHourOf(nowMs);
  const thisMinute = Math.floor(nowMs / MINUTE_MS);
  let kept = 0;
  let messages = 0;
  let sessions = 0;
  const expired: string[] = [];
  for (const [field, value] of Object.entries(fields)) {
    if (field.startsWith(SESSIONS)) {
      if (Number(field.slice(SESSIONS.length)) < thisMinute) expired.push(field);
      else sessions += Number(value);
      continue;
    }
    const prefix = field.startsWith(KEPT) ? KEPT : field.startsWith(MESSAGES) ? MESSAGES : undefined;
    if (prefix === undefined) continue;
    if (Number(field.slice(prefix.length)) < thisHour) expired.push(field);
    else if (prefix === KEPT) kept += Number(value);
    else messages += Number(value);
  }
  const players = Number(fields['bytes'] ?? 0);
  const boards = Number(fields['boards'] ?? 0);
  // Below 0 only for holds taken before they were counted (an upgrade), released since.
  sessions = Math.max(0, sessions);
  return {
    totals: {
      bytes: players + boards + kept + messages + sessions,
      players: Number(fields['players'] ?? 0),
      historyBytes: Number(fields['history'] ?? 0),
      boardBytes: boards,
      keptBytes: kept,
      messageBytes: messages,
      sessionBytes: sessions,
    },
    expired,
  };
}

/**
 * Adds a change to a workspace's totals in Redis; answers the totals after it. Kept answers'
 * hours that can no longer hold a live answer are dropped from the hash on the way.
 */
export async function addToStorageTotals(
  redis: RedisClient,
  workspaceId: string,
  change: StorageChange,
  options: { nowMs?: number } = {},
): Promise<StorageTotals> {
  const key = keys.workspaceStorage(workspaceId);
  // Plain commands, each atomic, sent in one write: a MULTI would double the commands of every
  // flush (measured: about one Redis command per request more with 2,000 workspaces).
  const writes: Array<Promise<unknown>> = [];
  if (change.bytes) writes.push(redis.hincrby(key, 'bytes', change.bytes));
  if (change.history) writes.push(redis.hincrby(key, 'history', change.history));
  if (change.players) writes.push(redis.hincrby(key, 'players', change.players));
  if (change.boards) writes.push(redis.hincrby(key, 'boards', change.boards));
  for (const [hour, bytes] of change.kept ?? []) if (bytes) writes.push(redis.hincrby(key, `${KEPT}${hour}`, bytes));
  for (const [hour, bytes] of change.messages ?? []) if (bytes) writes.push(redis.hincrby(key, `${MESSAGES}${hour}`, bytes));
  for (const [minute, bytes] of change.sessions ?? []) if (bytes) writes.push(redis.hincrby(key, `${SESSIONS}${minute}`, bytes));
  const [fields] = await Promise.all([redis.hgetall(key), ...writes]);
  const { totals, expired } = totalsOf(fields, options.nowMs ?? Date.now());
  if (expired.length > 0) await redis.hdel(key, ...expired);
  // The overview's largest workspaces, as of this addition (several instances may land out of
  // order: the next flush of the workspace puts it right; a ranking, not a bill).
  await redis.zadd(keys.statsStorage(), totals.bytes, workspaceId);
  return totals;
}

/** A workspace's totals as Redis holds them. */
export async function readStorageTotals(redis: RedisClient, workspaceId: string, options: { nowMs?: number } = {}): Promise<StorageTotals> {
  const fields = await redis.hgetall(keys.workspaceStorage(workspaceId));
  return totalsOf(fields, options.nowMs ?? Date.now()).totals;
}

export class StorageUsage {
  private readonly pending = new PendingBatch<string, Pending>((taken) => this.write(taken));
  /**
   * Deltas a flush has taken and sent, until Redis's answer (which includes them) is known:
   * counted meanwhile, or the instance would forget its own writes for a round trip and let a
   * write through at the quota (test/saves/storage-quota.test.ts saw a batch accepted after a 403).
   */
  private flushing = new Map<string, Pending>();
  /** Workspaces whose flushed deltas have been sent to Redis, until its answer. */
  private readonly sent = new Set<string>();
  private readonly known = new Map<string, Known>();
  /** Recounts waiting to run, and when each workspace was last recounted (reconcile). */
  private readonly recounts = new Map<string, NodeJS.Timeout>();
  private readonly recountedAt = new Map<string, number>();

  constructor(
    private readonly redis: RedisClient,
    private readonly refreshMs: number,
    options: {
      readonly recount?: { readonly delayMs: number; readonly minGapMs: number };
      /** Told each total learned from Redis (a flush's answer, a read, a recount): the quota's warnings. */
      readonly onTotals?: (workspaceId: string, totals: StorageTotals) => void;
    } = {},
  ) {
    this.recount = options.recount ?? { delayMs: 5000, minGapMs: 30_000 };
    this.onTotals = options.onTotals;
  }

  private readonly onTotals: ((workspaceId: string, totals: StorageTotals) => void) | undefined;

  private readonly recount: { readonly delayMs: number; readonly minGapMs: number };

  /** Adds one write's deltas (an applied write's reply, never a replay's); `bytes` includes `history`. */
  record(workspaceId: string, bytes: number, players: number, history = 0): void {
    if (bytes === 0 && players === 0 && history === 0) return;
    const pending = this.pendingOf(workspaceId);
    pending.bytes += bytes;
    pending.players += players;
    pending.history += history;
  }

  /** Adds leaderboard entries' bytes (negative for entries removed). */
  recordBoards(workspaceId: string, bytes: number): void {
    if (bytes !== 0) this.pendingOf(workspaceId).boards += bytes;
  }

  /** Adds the bytes of answers kept for Idempotency-Keys until `expiresAtMs`; they stop counting once that hour has passed. */
  recordKept(workspaceId: string, bytes: number, expiresAtMs: number): void {
    if (bytes > 0) addTo(this.pendingOf(workspaceId).kept, expiryHourOf(expiresAtMs), bytes);
  }

  /** Adds (or, negative, takes off) the bytes of messages waiting until `expiresAtMs`. */
  recordMessages(workspaceId: string, bytes: number, expiresAtMs: number): void {
    if (bytes !== 0) addTo(this.pendingOf(workspaceId).messages, expiryHourOf(expiresAtMs), bytes);
  }

  /**
   * Adds (or, negative, takes off) players held without data, by the minute their hash has
   * surely expired in (expiryMinute, the scripts' held changes).
   */
  recordSessions(workspaceId: string, changes: Iterable<readonly [minute: number, bytes: number]>): void {
    for (const [minute, bytes] of changes) if (bytes !== 0) addTo(this.pendingOf(workspaceId).sessions, minute, bytes);
  }

  /**
   * The workspace's totals as this instance knows them: synchronous while what Redis last said
   * is fresh (the common case), a promise when it must be read first.
   */
  current(workspaceId: string, nowMs: number): StorageTotals | Promise<StorageTotals> {
    const known = this.known.get(workspaceId);
    if (known !== undefined && nowMs - known.at < this.refreshMs) return this.withPending(workspaceId, known);
    return this.read(workspaceId, nowMs).then(
      (read) => this.withPending(workspaceId, read),
      (err: unknown) => {
        // The workspace's master failing over (or restarting): the totals known, with this
        // instance's own deltas since, for up to STALE_TOTALS_MS past their refresh, rather than
        // every write of the workspace failing whole for the failover's length (the fleet test
        // with the window's master killed). Past that, or never read, the failure stands.
        if (known !== undefined && isUnavailableError(unavailableCause(err)) && nowMs - known.at < this.refreshMs + STALE_TOTALS_MS) {
          return this.withPending(workspaceId, known);
        }
        throw err;
      },
    );
  }

  /** Writes the deltas taken since the last flush; what fails to write is kept for the next. */
  readonly flush = this.pending.flush;

  start(intervalMs: number): void {
    this.pending.start(intervalMs);
  }

  async stop(): Promise<void> {
    for (const timer of this.recounts.values()) clearTimeout(timer);
    this.recounts.clear();
    await this.pending.stop();
  }

  /**
   * Recounts the workspace's players' bytes from the players' own meta soon (after `delayMs`,
   * so that writes whose answers were lost have run in Redis), at most once every `minGapMs`
   * per workspace: what a write whose outcome is unknown stored was never reported, and its
   * provisional count (record) is only a guess.
   */
  scheduleRecount(workspaceId: string, nowMs: number): void {
    if (this.recounts.has(workspaceId)) return;
    const last = this.recountedAt.get(workspaceId) ?? -Infinity;
    const delay = Math.max(this.recount.delayMs, last + this.recount.minGapMs - nowMs);
    const timer = setTimeout(() => {
      this.recounts.delete(workspaceId);
      this.recountedAt.set(workspaceId, Date.now());
      void this.reconcile(workspaceId).catch(() => {});
    }, delay);
    timer.unref();
    this.recounts.set(workspaceId, timer);
  }

  /**
   * Sets the workspace's players' bytes, history bytes and count to what its players hold (their
   * own \0b, \0h, \0n), as a correction added to the total rather than a value written over it, so that
   * other instances' flushes during the recount are kept. This instance's own deltas are
   * flushed first. A write to a player the walk has already passed, made while it walks and
   * flushed by then, can be counted twice until the next recount: the error is at most what
   * the workspace writes during one walk. Boards, kept answers and messages are counted
   * apart and not recounted here.
   */
  async reconcile(workspaceId: string): Promise<{ before: StorageTotals; after: StorageTotals }> {
    await this.flush();
    const before = await readStorageTotals(this.redis, workspaceId);
    const held = await sumPlayerSizes(this.redis, workspaceId);
    const playersBytes = before.bytes - before.boardBytes - before.keptBytes - before.messageBytes - before.sessionBytes;
    const after = await addToStorageTotals(this.redis, workspaceId, {
      bytes: held.bytes - playersBytes,
      history: held.historyBytes - before.historyBytes,
      players: held.players - before.players,
    });
    this.known.set(workspaceId, { totals: after, at: Date.now() });
    this.onTotals?.(workspaceId, after);
    return { before, after };
  }

  private pendingOf(workspaceId: string): Pending {
    return this.pending.entry(workspaceId, emptyPending);
  }

  private withPending(workspaceId: string, known: Known): StorageTotals {
    let { bytes, players, historyBytes, boardBytes, keptBytes, messageBytes, sessionBytes } = known.totals;
    const flushing = known.holdsFlushing ? undefined : this.flushing.get(workspaceId);
    for (const deltas of [this.pending.get(workspaceId), flushing]) {
      if (deltas === undefined) continue;
      let kept = 0;
      let messages = 0;
      let sessions = 0;
      for (const b of deltas.kept.values()) kept += b;
      for (const b of deltas.messages.values()) messages += b;
      for (const b of deltas.sessions.values()) sessions += b;
      bytes += deltas.bytes + deltas.boards + kept + messages + sessions;
      players += deltas.players;
      historyBytes += deltas.history;
      boardBytes += deltas.boards;
      keptBytes += kept;
      messageBytes += messages;
      sessionBytes += sessions;
    }
    return { bytes, players, historyBytes, boardBytes, keptBytes, messageBytes, sessionBytes };
  }

  private async read(workspaceId: string, nowMs: number): Promise<Known> {
    // Sent after the flush's commands, the read's answer includes them (holdsFlushing).
    const holdsFlushing = this.sent.has(workspaceId);
    const before = this.known.get(workspaceId);
    const totals = await readStorageTotals(this.redis, workspaceId, { nowMs });
    // A flush answered while this read was out: its totals are as new, and it no longer counts apart.
    const meanwhile = this.known.get(workspaceId);
    if (meanwhile !== undefined && meanwhile !== before) return meanwhile;
    const known = { totals, at: nowMs, holdsFlushing };
    this.known.set(workspaceId, known);
    this.onTotals?.(workspaceId, this.withPending(workspaceId, known));
    return known;
  }

  private async write(taken: Map<string, Pending>): Promise<void> {
    this.flushing = taken;
    const failed: unknown[] = [];
    try {
      await writePaced(taken, async ([workspaceId, delta]) => {
        try {
          this.sent.add(workspaceId);
          const totals = await addToStorageTotals(this.redis, workspaceId, delta);
          // In one step: the answer includes these deltas, so they stop being counted apart.
          this.sent.delete(workspaceId);
          this.known.set(workspaceId, { totals, at: Date.now() });
          taken.delete(workspaceId);
          this.onTotals?.(workspaceId, totals);
        } catch (err) {
          this.sent.delete(workspaceId);
          failed.push(err);
          taken.delete(workspaceId);
          const pending = this.pendingOf(workspaceId);
          pending.bytes += delta.bytes;
          pending.history += delta.history;
          pending.players += delta.players;
          pending.boards += delta.boards;
          for (const [hour, bytes] of delta.kept) addTo(pending.kept, hour, bytes);
          for (const [hour, bytes] of delta.messages) addTo(pending.messages, hour, bytes);
          for (const [minute, bytes] of delta.sessions) addTo(pending.sessions, minute, bytes);
        }
      });
    } finally {
      this.flushing = new Map();
    }
    if (failed.length > 0) throw failed[0];
  }
}
