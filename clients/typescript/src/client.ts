// PlayerDataClient: one workspace's connection to the service. Owns the calls and the mapping of
// answers to values, undefined (the service's PLAYER_NOT_FOUND / KEY_NOT_FOUND) or a
// PlayerDataError carrying the service's code. Retries, timeouts and aborts are transport.ts's;
// every write sends an Idempotency-Key, so that its retries are applied once.
import { randomUUID } from 'node:crypto';
import {
  checkAcks,
  checkKey,
  checkMessage,
  checkNumber,
  checkOps,
  checkOptionalText,
  checkPrintable,
  checkValue,
  checkVersion,
  userIdText,
} from './checks.js';
import type { Operation } from './errors.js';
import { Leaderboard, type LeaderboardOptions } from './leaderboard.js';
import { retryAfterSeconds, Transport, type Answer, type Request } from './transport.js';
import type {
  AcquiredSession,
  AcquireOptions,
  BatchOp,
  BatchOpResult,
  BatchOptions,
  BatchResult,
  CallOptions,
  ClientConfig,
  ConditionalWriteOptions,
  DeleteResult,
  DeliveredMessage,
  Entry,
  IncrementResult,
  JsonValue,
  ListPlayersOptions,
  ListVersionsOptions,
  LoadedSession,
  PlayerAtVersion,
  PlayerBatch,
  PlayerBatchOutcome,
  PlayerValues,
  PlayersPage,
  ReleaseResult,
  RenewOptions,
  SendMessageOptions,
  SentMessage,
  Session,
  SessionOutcome,
  SetResult,
  UserId,
  Value,
  VersionsPage,
  Workspace,
  WaitingMessage,
  WriteOptions,
} from './types.js';

import { errorOf, isMissing, succeeded, type Body } from './answers.js';

function versionOf(body: Body): number {
  return typeof body['version'] === 'number' ? body['version'] : 0;
}

function opResult(raw: Body): BatchOpResult {
  if ('updated_at' in raw) return { key: raw['key'], value: raw['value'], updatedAt: raw['updated_at'] };
  if ('deleted' in raw) return { key: raw['key'], deleted: raw['deleted'] };
  return { key: raw['key'], value: raw['value'] };
}

/** A session's fields: `data` of a single acquire or renew, or one player's entry of a multi-player acquire. */
function sessionOf(fields: Body, version: number): Session {
  return { sessionId: fields['sessionId'], userId: String(fields['userId']), owner: fields['owner'], expiresAt: fields['expiresAt'], version };
}

function deliveredOf(list: unknown): DeliveredMessage[] {
  return Array.isArray(list) ? list.map((m: Body) => ({ id: m['id'], message: m['message'], sentAt: m['sentAt'] })) : [];
}

/** An acquire's session with its metadata, and with `load` the data and the waiting messages. */
function acquiredOf(fields: Body, version: number, load: boolean | undefined): AcquiredSession | LoadedSession {
  const raw = fields['metadata'] ?? {};
  const acquired: AcquiredSession = {
    ...sessionOf(fields, version),
    metadata: { firstSessionAt: raw['firstSessionAt'], sessionCount: raw['sessionCount'] },
  };
  if (!load) return acquired;
  return { ...acquired, values: fields['values'] ?? {}, messages: deliveredOf(fields['messages']) };
}

/** A save's answer hands messages only to a session that keeps holding the player; absent otherwise. */
function withMessages<T extends object>(result: T, raw: Body): T & { messages?: DeliveredMessage[] } {
  return 'messages' in raw ? { ...result, messages: deliveredOf(raw['messages']) } : result;
}

export class PlayerDataClient {
  private readonly transport: Transport;

  constructor(config: ClientConfig) {
    if (typeof config?.baseUrl !== 'string' || typeof config.apiKey !== 'string' || config.apiKey === '') {
      throw new TypeError('PlayerData: expects { baseUrl: string, apiKey: string }');
    }
    const retry = config.retry ?? {};
    this.transport = new Transport({
      baseUrl: config.baseUrl.replace(/\/+$/, ''),
      apiKey: config.apiKey,
      timeoutMs: config.timeoutMs ?? 10_000,
      retry: {
        attempts: Math.max(1, Math.floor(retry.attempts ?? 3)),
        baseDelayMs: retry.baseDelayMs ?? 100,
        maxDelayMs: retry.maxDelayMs ?? 2_000,
        maxRateLimitWaitMs: retry.maxRateLimitWaitMs ?? 0,
      },
    });
  }

  /** Creates a client and checks its settings and key with one ping. */
  static async connect(config: ClientConfig): Promise<{ client: PlayerDataClient; workspace: Workspace }> {
    const client = new PlayerDataClient(config);
    return { client, workspace: await client.pingAs('init') };
  }

  ping(options: CallOptions = {}): Promise<Workspace> {
    return this.pingAs('ping', options);
  }

  /** The stored value, or undefined when the player or the key does not exist. */
  async get<T extends Value = Value>(userId: UserId, key: string, options: CallOptions = {}): Promise<T | undefined> {
    return (await this.readEntry<T>('get', userId, key, options)).value;
  }

  /** Every key of the player with its value, or undefined when the player has no data. */
  async getAll(userId: UserId, options: CallOptions = {}): Promise<Record<string, Value> | undefined> {
    const read = await this.readAll('getAll', userId, options);
    return read.exists ? read.values : undefined;
  }

  /** The value with its `updatedAt` and the player's version (also when the key or player is missing). */
  getVersioned<T extends Value = Value>(userId: UserId, key: string, options: CallOptions = {}): Promise<Entry<T>> {
    return this.readEntry<T>('getVersioned', userId, key, options);
  }

  /** Every key with its value, and the player's version: what a read-modify-write with `ifVersion` starts from. */
  getAllVersioned(userId: UserId, options: CallOptions = {}): Promise<PlayerValues> {
    return this.readAll('getAllVersioned', userId, options);
  }

  async set(userId: UserId, key: string, value: Value, options: ConditionalWriteOptions = {}): Promise<SetResult> {
    const body = {
      userId: userIdText('set', userId),
      key: checkKey('set', key),
      value: checkValue('set', value),
      ...this.conditions('set', options),
    };
    const answer = succeeded('set', await this.write('set', '/data/set', body, options));
    const data = answer['data'];
    return { key: data.key, value: data.value, updatedAt: data.updated_at, version: versionOf(answer) };
  }

  /**
   * Adds `amount` (default 1) atomically, starting from `defaultValue` (default 0) when the key
   * does not exist; returns the new value. Retries send the same Idempotency-Key, so a lost
   * answer never counts twice.
   */
  async increment(
    userId: UserId,
    key: string,
    amount?: number,
    defaultValue?: number,
    options: ConditionalWriteOptions = {},
  ): Promise<number> {
    return (await this.incrementAs('increment', userId, key, amount, defaultValue, options)).value;
  }

  /** increment, answering the new value with the player's version. */
  incrementVersioned(
    userId: UserId,
    key: string,
    amount?: number,
    defaultValue?: number,
    options: ConditionalWriteOptions = {},
  ): Promise<IncrementResult> {
    return this.incrementAs('incrementVersioned', userId, key, amount, defaultValue, options);
  }

  /** Deletes one key, or all of the player's data without a key; returns how many keys went. */
  async delete(userId: UserId, key?: string, options: ConditionalWriteOptions = {}): Promise<number> {
    return (await this.deleteAs('delete', userId, key, options)).deleted;
  }

  /** delete, answering the count with the player's version. */
  deleteVersioned(userId: UserId, key?: string, options: ConditionalWriteOptions = {}): Promise<DeleteResult> {
    return this.deleteAs('deleteVersioned', userId, key, options);
  }

  /** Applies every op to one player, all or nothing, in one request; one result per op, in order. */
  async batch(userId: UserId, ops: readonly BatchOp[], options: BatchOptions = {}): Promise<BatchResult> {
    const body = {
      userId: userIdText('batch', userId),
      ops: checkOps('batch', ops),
      ...this.conditions('batch', options),
      release: options.release,
      ackMessages: checkAcks('batch', options.ackMessages),
    };
    const answer = succeeded('batch', await this.write('batch', '/data/batch', body, options));
    const data = answer['data'] as Body;
    return withMessages({ results: (data['results'] as Body[]).map(opResult), version: versionOf(answer) }, data);
  }

  /**
   * Many players in one request (at most 100): each player's ops are atomic, and players succeed
   * or fail independently. Throws only when the request as a whole fails (invalid, 429, ...).
   * Players are written in order on each Redis node; once the workspace's byte budget is spent
   * part way, the rest on that node fail with status 429 (`retryAfterSeconds` set), unwritten:
   * send those again after it, or repeat the call with the same `idempotencyKey`. Players whose
   * Redis node failed (503 STORAGE_UNAVAILABLE or OUTCOME_UNKNOWN) are retried as `retry` allows,
   * by sending the request again with its key: only they are written, the others replayed.
   */
  async batchPlayers(players: readonly PlayerBatch[], options: WriteOptions = {}): Promise<PlayerBatchOutcome[]> {
    const op: Operation = 'batchPlayers';
    if (!Array.isArray(players)) throw new TypeError(`PlayerData.${op}: players must be an array, got ${String(players)}`);
    const body = {
      players: players.map((p, i) => ({
        userId: userIdText(op, p.userId),
        ops: checkOps(op, p.ops, `players[${i}].ops`),
        ifVersion: checkVersion(op, p.ifVersion, `players[${i}].ifVersion`),
        sessionId: checkOptionalText(op, p.sessionId, `players[${i}].sessionId`),
        release: p.release,
        ackMessages: checkAcks(op, p.ackMessages, `players[${i}].ackMessages`),
      })),
    };
    const outcomes = await this.manyPlayers(op, '/data/batch', body, options);
    return outcomes.map(({ entry, attempts, retryAfter }): PlayerBatchOutcome => {
      const userId = String(entry['userId']);
      if (entry['success'] === true) {
        return withMessages({ userId, success: true, version: versionOf(entry), results: (entry['results'] as Body[]).map(opResult) }, entry);
      }
      const status = Number(entry['status']);
      return { userId, success: false, error: errorOf(op, status, entry, attempts, status === 429 ? retryAfter : undefined) };
    });
  }

  /**
   * Takes the lease on a player for `owner` (a server id). SESSION_LOCKED (with the holder's
   * `{owner, expiresAt}` in `data`) while another live session holds it, unless `steal`.
   */
  acquireSession(userId: UserId, owner: string, options: AcquireOptions & { load: true }): Promise<LoadedSession>;
  acquireSession(userId: UserId, owner: string, options?: AcquireOptions): Promise<AcquiredSession>;
  async acquireSession(userId: UserId, owner: string, options: AcquireOptions = {}): Promise<AcquiredSession | LoadedSession> {
    const op: Operation = 'acquireSession';
    const body = { userId: userIdText(op, userId), ...this.acquireFields(op, owner, options) };
    const answer = succeeded(op, await this.write(op, '/sessions/acquire', body, options));
    return acquiredOf(answer['data'], versionOf(answer), options.load);
  }

  /**
   * Many players for `owner` in one request (at most 100, each once), for a server that opens
   * with many: each is acquired on its own, as acquireSession would, and answered in order with
   * its session or its error (SESSION_LOCKED with the holder in `data`, ...). Throws only when
   * the request as a whole fails (invalid, 429, ...). A player refused alone past the workspace's
   * byte budget (its load, or its turn) fails with status 429 and `retryAfterSeconds`: ask again
   * for it after that (a refused load holds its session: the same owner acquires it again).
   * Players whose Redis node failed (503) are retried as `retry` allows, the others replayed.
   */
  acquireSessions(
    userIds: readonly UserId[],
    owner: string,
    options: AcquireOptions & { load: true },
  ): Promise<SessionOutcome<LoadedSession>[]>;
  acquireSessions(userIds: readonly UserId[], owner: string, options?: AcquireOptions): Promise<SessionOutcome[]>;
  async acquireSessions(
    userIds: readonly UserId[],
    owner: string,
    options: AcquireOptions = {},
  ): Promise<SessionOutcome<AcquiredSession | LoadedSession>[]> {
    const op: Operation = 'acquireSessions';
    if (!Array.isArray(userIds)) throw new TypeError(`PlayerData.${op}: userIds must be an array, got ${String(userIds)}`);
    const body = { players: userIds.map((id) => userIdText(op, id)), ...this.acquireFields(op, owner, options) };
    const outcomes = await this.manyPlayers(op, '/sessions/acquire', body, options);
    return outcomes.map(({ entry, attempts, retryAfter }) => {
      const userId = String(entry['userId']);
      if (entry['success'] === true) return { ...acquiredOf(entry, versionOf(entry), options.load), success: true as const };
      const status = Number(entry['status']);
      return { userId, success: false as const, error: errorOf(op, status, entry, attempts, status === 429 ? retryAfter : undefined) };
    });
  }

  /** Extends the lease; SESSION_LOST when that session no longer holds the player. */
  async renewSession(userId: UserId, sessionId: string, options: RenewOptions = {}): Promise<Session> {
    const op: Operation = 'renewSession';
    const body = {
      userId: userIdText(op, userId),
      sessionId: checkKey(op, sessionId, 'sessionId'),
      ttlSeconds: checkNumber(op, options.ttlSeconds, 'ttlSeconds'),
    };
    const answer = succeeded(op, await this.write(op, '/sessions/renew', body, options));
    return sessionOf(answer['data'], versionOf(answer));
  }

  /** Gives the player up; `released` is false when the session no longer held it. Idempotent. */
  async releaseSession(userId: UserId, sessionId: string, options: WriteOptions = {}): Promise<ReleaseResult> {
    const op: Operation = 'releaseSession';
    const body = { userId: userIdText(op, userId), sessionId: checkKey(op, sessionId, 'sessionId') };
    const answer = succeeded(op, await this.write(op, '/sessions/release', body, options));
    return { released: answer['data'].released === true, version: versionOf(answer) };
  }

  /**
   * Leaves a message for a player (a gift, a reward, a refund), whoever holds it, online or not:
   * it waits until the session holding the player acknowledges it with a save (ackMessages), or
   * until it expires. INBOX_FULL (409) past 100 waiting; PAYLOAD_TOO_LARGE (413) over 16 KiB as JSON.
   */
  async sendMessage(userId: UserId, message: JsonValue, options: SendMessageOptions = {}): Promise<SentMessage> {
    const op: Operation = 'sendMessage';
    const body = {
      userId: userIdText(op, userId),
      message: checkMessage(op, message),
      ttlSeconds: checkNumber(op, options.ttlSeconds, 'ttlSeconds'),
    };
    const data = succeeded(op, await this.write(op, '/messages', body, options))['data'];
    return { messageId: data.messageId, sentAt: data.sentAt, expiresAt: data.expiresAt };
  }

  /** The messages waiting for the player, oldest first; [] when none. Reading never consumes them. */
  async getMessages<T extends JsonValue = JsonValue>(userId: UserId, options: CallOptions = {}): Promise<WaitingMessage<T>[]> {
    const op: Operation = 'getMessages';
    const query = new URLSearchParams({ userId: userIdText(op, userId) });
    const answer = await this.transport.send({ operation: op, method: 'GET', path: `/messages?${query}`, signal: options.signal });
    return (succeeded(op, answer)['data'].messages as Body[]).map((m) => ({
      id: m['id'],
      message: m['message'] as T,
      sentAt: m['sentAt'],
      expiresAt: m['expiresAt'],
    }));
  }

  /**
   * A page of the player's versions, newest first: the current one, then its restore points
   * (docs/history.md). undefined when the player was never written. Needs a write key.
   */
  async listVersions(userId: UserId, options: ListVersionsOptions = {}): Promise<VersionsPage | undefined> {
    const op: Operation = 'listVersions';
    const query = new URLSearchParams({ userId: userIdText(op, userId) });
    const limit = checkVersion(op, options.limit, 'limit');
    const before = checkVersion(op, options.before, 'before');
    if (limit !== undefined) query.set('limit', String(limit));
    if (before !== undefined) query.set('before', String(before));
    const answer = await this.transport.send({ operation: op, method: 'GET', path: `/data/versions?${query}`, signal: options.signal });
    if (isMissing(op, answer)) return undefined;
    const data = succeeded(op, answer)['data'];
    return { userId: data.userId, version: data.version, versions: data.versions, nextBefore: data.nextBefore };
  }

  /**
   * A page of the workspace's players (GET /players): by user id prefix, only those holding
   * `hasKey` when given; go on with `next` until it is null. Any key may list.
   */
  async listPlayers(options: ListPlayersOptions = {}): Promise<PlayersPage> {
    const op: Operation = 'listPlayers';
    const query = new URLSearchParams();
    for (const field of ['prefix', 'hasKey', 'cursor'] as const) {
      const value = options[field];
      if (value === undefined) continue;
      if (typeof value !== 'string' || value === '') throw new TypeError(`PlayerData.${op}: ${field} must be a non-empty string, got ${String(value)}`);
      query.set(field, value);
    }
    const limit = checkVersion(op, options.limit, 'limit');
    if (limit !== undefined) query.set('limit', String(limit));
    const text = query.toString();
    const answer = await this.transport.send({ operation: op, method: 'GET', path: text === '' ? '/players' : `/players?${text}`, signal: options.signal });
    const data = succeeded(op, answer)['data'];
    return { players: data.players, next: data.next };
  }

  /**
   * The whole player as it was at `version` (one listVersions gives); VERSION_NOT_RETAINED (404,
   * with the current `version`) when the history no longer keeps it. undefined when the player
   * was never written. To bring it back, save its values. Needs a write key.
   */
  async getVersion(userId: UserId, version: number, options: CallOptions = {}): Promise<PlayerAtVersion | undefined> {
    const op: Operation = 'getVersion';
    if (version === undefined) throw new TypeError(`PlayerData.${op}: version must be a non-negative whole number, got undefined`);
    const query = new URLSearchParams({ userId: userIdText(op, userId), version: String(checkVersion(op, version, 'version')) });
    const answer = await this.transport.send({ operation: op, method: 'GET', path: `/data/version?${query}`, signal: options.signal });
    if (isMissing(op, answer)) return undefined;
    const data = succeeded(op, answer)['data'];
    const values: Record<string, Value> = {};
    const updatedAt: Record<string, string> = {};
    for (const [key, entry] of Object.entries(data.data as Record<string, { value: Value; updated_at: string }>)) {
      // Own properties even for `__proto__`, as the answer has them.
      Object.defineProperty(values, key, { value: entry.value, enumerable: true, writable: true, configurable: true });
      Object.defineProperty(updatedAt, key, { value: entry.updated_at, enumerable: true, writable: true, configurable: true });
    }
    return { userId: data.userId, version: data.version, currentVersion: data.currentVersion, values, updatedAt };
  }

  /**
   * A leaderboard of the workspace (docs/leaderboards.md): its calls read and write `name`, in
   * `options.period` (default all-time; previous: the period before the current one).
   */
  leaderboard(name: string, options: LeaderboardOptions = {}): Leaderboard {
    return new Leaderboard(name, options, {
      read: (operation, path, signal) => this.transport.send({ operation, method: 'GET', path, signal }),
      write: (operation, path, body, writeOptions) => this.write(operation, path, body, writeOptions),
    });
  }

  private async pingAs(operation: 'init' | 'ping', options: CallOptions = {}): Promise<Workspace> {
    const answer = await this.transport.send({ operation, method: 'GET', path: '/ping', signal: options.signal });
    const body = succeeded(operation, answer);
    return { workspaceId: body['workspaceId'], workspaceName: body['workspaceName'], plan: body['plan'] };
  }

  private async readEntry<T extends Value>(operation: Operation, userId: UserId, key: string, options: CallOptions): Promise<Entry<T>> {
    const query = new URLSearchParams({ userId: userIdText(operation, userId), key: checkKey(operation, key) });
    const answer = await this.transport.send({ operation, method: 'GET', path: `/data?${query}`, signal: options.signal });
    if (isMissing(operation, answer)) return { value: undefined, updatedAt: undefined, version: versionOf(answer.body!) };
    const body = succeeded(operation, answer);
    return { value: body['data'].value as T, updatedAt: body['data'].updated_at, version: versionOf(body) };
  }

  private async readAll(operation: Operation, userId: UserId, options: CallOptions): Promise<PlayerValues> {
    const query = new URLSearchParams({ userId: userIdText(operation, userId) });
    const answer = await this.transport.send({ operation, method: 'GET', path: `/data?${query}`, signal: options.signal });
    if (isMissing(operation, answer)) return { values: {}, exists: false, version: versionOf(answer.body!) };
    const body = succeeded(operation, answer);
    return { values: body['data'] as Record<string, Value>, exists: true, version: versionOf(body) };
  }

  private async incrementAs(
    operation: Operation,
    userId: UserId,
    key: string,
    amount: number | undefined,
    defaultValue: number | undefined,
    options: ConditionalWriteOptions,
  ): Promise<IncrementResult> {
    const body = {
      userId: userIdText(operation, userId),
      key: checkKey(operation, key),
      amount: checkNumber(operation, amount, 'amount'),
      defaultValue: checkNumber(operation, defaultValue, 'defaultValue'),
      ...this.conditions(operation, options),
    };
    const answer = succeeded(operation, await this.write(operation, '/data/increment', body, options));
    return { value: answer['value'] as number, version: versionOf(answer) };
  }

  private async deleteAs(operation: Operation, userId: UserId, key: string | undefined, options: ConditionalWriteOptions): Promise<DeleteResult> {
    const body = {
      userId: userIdText(operation, userId),
      key: key === undefined ? undefined : checkKey(operation, key),
      ...this.conditions(operation, options),
    };
    const answer = succeeded(operation, await this.write(operation, '/data/delete', body, options));
    return { deleted: answer['data'].deleted as number, version: versionOf(answer) };
  }

  private acquireFields(operation: Operation, owner: string, options: AcquireOptions) {
    return {
      owner: checkPrintable(operation, owner, 'owner'),
      ttlSeconds: checkNumber(operation, options.ttlSeconds, 'ttlSeconds'),
      steal: options.steal,
      load: options.load,
    };
  }

  private conditions(operation: Operation, options: ConditionalWriteOptions): { ifVersion?: number; sessionId?: string } {
    return {
      ifVersion: checkVersion(operation, options.ifVersion),
      sessionId: checkOptionalText(operation, options.sessionId, 'sessionId'),
    };
  }

  /** One write: the body serialized once and one Idempotency-Key, both reused by every retry. */
  private write(operation: Operation, path: string, body: object, options: WriteOptions): Promise<Answer> {
    return this.transport.send(this.writeRequest(operation, path, body, options));
  }

  private writeRequest(operation: Operation, path: string, body: object, options: WriteOptions): Request {
    const idempotencyKey =
      options.idempotencyKey === undefined ? randomUUID() : checkPrintable(operation, options.idempotencyKey, 'idempotencyKey');
    return { operation, method: 'POST', path, body: JSON.stringify(body), idempotencyKey, signal: options.signal };
  }

  /**
   * A many-player write (a batch, an acquire): each player's answer, and the attempts and
   * Retry-After of the answer it came from. Players that failed alone and may succeed later (a
   * 5xx: their Redis node failed; a 429 the retry settings wait for) are sent again with the
   * whole request and its Idempotency-Key (Transport.sendAgain): the service writes only them
   * and replays the others, whose first answers are kept here.
   */
  private async manyPlayers(
    operation: Operation,
    path: string,
    body: object,
    options: WriteOptions,
  ): Promise<Array<{ entry: Body; attempts: number; retryAfter: number | undefined }>> {
    const request = this.writeRequest(operation, path, body, options);
    let answer = await this.transport.send(request);
    const outcomes = (succeeded(operation, answer)['data'].players as Body[]).map((entry) => ({
      entry,
      attempts: answer.attempts,
      retryAfter: retryAfterSeconds(answer),
    }));
    const failing = () => outcomes.filter(({ entry }) => entry['success'] !== true && (Number(entry['status']) >= 500 || Number(entry['status']) === 429));
    for (let left = failing(); left.length > 0; left = failing()) {
      // A 5xx player is always worth another try; 429s only when the settings wait for their Retry-After.
      const status = left.some(({ entry }) => Number(entry['status']) >= 500) ? 503 : 429;
      const again = await this.transport.sendAgain(request, answer, { status });
      if (again === undefined || again.status !== 200 || again.body?.['success'] !== true) break;
      answer = again;
      const players = again.body['data'].players as Body[];
      for (const [i, outcome] of outcomes.entries()) {
        if (!left.includes(outcome)) continue;
        const next = players[i]!;
        // A player an attempt may have written stays unknown when this one did not reach it
        // (refused before its turn): only its own answer, replayed, says what happened.
        const notReached = next['success'] !== true && (Number(next['status']) === 429 || next['code'] === 'STORAGE_UNAVAILABLE');
        if (outcome.entry['code'] === 'OUTCOME_UNKNOWN' && notReached) continue;
        outcomes[i] = { entry: next, attempts: again.attempts, retryAfter: retryAfterSeconds(again) };
      }
    }
    return outcomes;
  }
}
