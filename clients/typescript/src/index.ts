// The client's module-level API: the seven functions of the Luau module (init() connects once
// with one ping, and the others use that connection), plus the safe-save calls (versions,
// batches, sessions, messages, a player's past versions) and leaderboards. PlayerDataClient serves code that talks to more than one
// workspace.
import { PlayerDataClient } from './client.js';
import type { Operation } from './errors.js';
import type { Leaderboard, LeaderboardOptions } from './leaderboard.js';
import type {
  AcquiredSession,
  AcquireOptions,
  BatchOp,
  BatchOptions,
  BatchResult,
  CallOptions,
  ClientConfig,
  ConditionalWriteOptions,
  DeleteResult,
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
  WaitingMessage,
  Workspace,
  WriteOptions,
} from './types.js';

export { PlayerDataClient } from './client.js';
export { Leaderboard } from './leaderboard.js';
export type { BoardEntry, BoardPage, LeaderboardOptions, Order, PageOptions, Period, PeriodInfo, PlayerRank, ScoreResult } from './leaderboard.js';
export type * from './types.js';
export type { RetryConfig } from './transport.js';
export { PlayerDataError, type ClientErrorCode, type ErrorCode, type ErrorDetails, type Operation, type ServerErrorCode } from './errors.js';

let current: PlayerDataClient | undefined;

function connected(operation: Operation): PlayerDataClient {
  if (!current) throw new Error(`PlayerData.${operation}: call init({ baseUrl, apiKey }) first`);
  return current;
}

/** Checks the settings and key with one ping; throws PlayerDataError with the server's message and code. */
export async function init(config: ClientConfig): Promise<Workspace> {
  current = undefined;
  const { client, workspace } = await PlayerDataClient.connect(config);
  current = client;
  return workspace;
}

// Each function is async so that every failure, "not initialized" included, is a rejection.
export async function ping(options?: CallOptions): Promise<Workspace> {
  return connected('ping').ping(options);
}

/** The stored value, or undefined when the player or the key does not exist. */
export async function get<T extends Value = Value>(userId: UserId, key: string, options?: CallOptions): Promise<T | undefined> {
  return connected('get').get<T>(userId, key, options);
}

/** Every key of the player with its value, or undefined when the player has no data. */
export async function getAll(userId: UserId, options?: CallOptions): Promise<Record<string, Value> | undefined> {
  return connected('getAll').getAll(userId, options);
}

/** The value with its updatedAt and the player's version. */
export async function getVersioned<T extends Value = Value>(userId: UserId, key: string, options?: CallOptions): Promise<Entry<T>> {
  return connected('getVersioned').getVersioned<T>(userId, key, options);
}

/** Every key with its value ({} for none) and the player's version. */
export async function getAllVersioned(userId: UserId, options?: CallOptions): Promise<PlayerValues> {
  return connected('getAllVersioned').getAllVersioned(userId, options);
}

/** Stores the value; answers the stored entry with the player's new version. */
export async function set(userId: UserId, key: string, value: Value, options?: ConditionalWriteOptions): Promise<SetResult> {
  return connected('set').set(userId, key, value, options);
}

/** Adds amount (default 1) atomically, from defaultValue (default 0) for a new key; returns the new value. */
export async function increment(
  userId: UserId,
  key: string,
  amount?: number,
  defaultValue?: number,
  options?: ConditionalWriteOptions,
): Promise<number> {
  return connected('increment').increment(userId, key, amount, defaultValue, options);
}

/** increment, answering the new value with the player's version. */
export async function incrementVersioned(
  userId: UserId,
  key: string,
  amount?: number,
  defaultValue?: number,
  options?: ConditionalWriteOptions,
): Promise<IncrementResult> {
  return connected('incrementVersioned').incrementVersioned(userId, key, amount, defaultValue, options);
}

/** Deletes one key, or all of the player's data without a key; returns how many keys went. */
async function remove(userId: UserId, key?: string, options?: ConditionalWriteOptions): Promise<number> {
  return connected('delete').delete(userId, key, options);
}
// `delete` is reserved as a declaration name but allowed as an export name.
export { remove as delete };

/** delete, answering the count with the player's version. */
export async function deleteVersioned(userId: UserId, key?: string, options?: ConditionalWriteOptions): Promise<DeleteResult> {
  return connected('deleteVersioned').deleteVersioned(userId, key, options);
}

/** One player's ops, all or nothing, in one request. */
export async function batch(userId: UserId, ops: readonly BatchOp[], options?: BatchOptions): Promise<BatchResult> {
  return connected('batch').batch(userId, ops, options);
}

/** Many players' ops in one request; each player succeeds or fails on its own. */
export async function batchPlayers(players: readonly PlayerBatch[], options?: WriteOptions): Promise<PlayerBatchOutcome[]> {
  return connected('batchPlayers').batchPlayers(players, options);
}

export async function acquireSession(userId: UserId, owner: string, options: AcquireOptions & { load: true }): Promise<LoadedSession>;
export async function acquireSession(userId: UserId, owner: string, options?: AcquireOptions): Promise<AcquiredSession>;
export async function acquireSession(userId: UserId, owner: string, options?: AcquireOptions): Promise<AcquiredSession | LoadedSession> {
  return connected('acquireSession').acquireSession(userId, owner, options);
}

/** Many players in one request, each acquired on its own: per player, in order, its session or its error. */
export async function acquireSessions(
  userIds: readonly UserId[],
  owner: string,
  options: AcquireOptions & { load: true },
): Promise<SessionOutcome<LoadedSession>[]>;
export async function acquireSessions(userIds: readonly UserId[], owner: string, options?: AcquireOptions): Promise<SessionOutcome[]>;
export async function acquireSessions(
  userIds: readonly UserId[],
  owner: string,
  options?: AcquireOptions,
): Promise<SessionOutcome<AcquiredSession | LoadedSession>[]> {
  return connected('acquireSessions').acquireSessions(userIds, owner, options);
}

export async function renewSession(userId: UserId, sessionId: string, options?: RenewOptions): Promise<Session> {
  return connected('renewSession').renewSession(userId, sessionId, options);
}

export async function releaseSession(userId: UserId, sessionId: string, options?: WriteOptions): Promise<ReleaseResult> {
  return connected('releaseSession').releaseSession(userId, sessionId, options);
}

/** Leaves a message for a player, processed by the session that holds it (acknowledged with a save's ackMessages). */
export async function sendMessage(userId: UserId, message: JsonValue, options?: SendMessageOptions): Promise<SentMessage> {
  return connected('sendMessage').sendMessage(userId, message, options);
}

/** The messages waiting for the player, oldest first; reading never consumes them. */
export async function getMessages<T extends JsonValue = JsonValue>(userId: UserId, options?: CallOptions): Promise<WaitingMessage<T>[]> {
  return connected('getMessages').getMessages<T>(userId, options);
}

/** A page of the player's versions, newest first; undefined when the player was never written. */
export async function listVersions(userId: UserId, options?: ListVersionsOptions): Promise<VersionsPage | undefined> {
  return connected('listVersions').listVersions(userId, options);
}

/** A page of the workspace's players, by user id prefix and holding a key; go on with `next` until it is null. */
export async function listPlayers(options?: ListPlayersOptions): Promise<PlayersPage> {
  return connected('listPlayers').listPlayers(options);
}

/** The whole player at one of its versions; undefined when the player was never written. */
export async function getVersion(userId: UserId, version: number, options?: CallOptions): Promise<PlayerAtVersion | undefined> {
  return connected('getVersion').getVersion(userId, version, options);
}

/**
 * A leaderboard of the workspace: set, increment, delete, top, page, pages, rank, around. Its
 * calls are async; making it is not, and throws before init() (or for a bad name).
 */
export function leaderboard(name: string, options?: LeaderboardOptions): Leaderboard {
  return connected('leaderboard').leaderboard(name, options);
}
