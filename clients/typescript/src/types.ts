// The values, options and results of the client's calls, as the wire contract
// (docs/safe-saves.md) gives them, with camelCase names (updated_at -> updatedAt).
import type { PlayerDataError } from './errors.js';
import type { RetryConfig } from './transport.js';

export type JsonValue = number | string | boolean | null | JsonValue[] | { [key: string]: JsonValue };
/** What the service stores: any JSON value except null at the top. */
export type Value = number | string | boolean | JsonValue[] | { [key: string]: JsonValue };
/** A player's id: 42 and "42" are the same player. */
export type UserId = number | string;

export interface ClientConfig {
  /** Base URL of the service, ending in /api/v1 (a trailing slash is ignored). */
  readonly baseUrl: string;
  readonly apiKey: string;
  /** Gives up on one request after this long (default 10 000 ms); it then fails with status 0, code TIMEOUT. */
  readonly timeoutMs?: number;
  /** Which failures are tried again, and how often (see RetryConfig). */
  readonly retry?: RetryConfig;
}

export interface Workspace {
  readonly workspaceId: string;
  readonly workspaceName: string;
  readonly plan: 'free' | 'pro';
}

export interface CallOptions {
  /** Aborts the call, whether a request is in flight or a retry is waiting: code ABORTED. */
  readonly signal?: AbortSignal;
}

export interface WriteOptions extends CallOptions {
  /**
   * Sent as Idempotency-Key (1-128 printable ASCII characters) on every attempt of this call.
   * Default: a fresh crypto.randomUUID() per call. Pass your own (a purchase id) to make a
   * repeat of the whole call, e.g. after a crash, safe as well.
   */
  readonly idempotencyKey?: string;
}

export interface ConditionalWriteOptions extends WriteOptions {
  /** Write only if the player's version is this, else VERSION_CONFLICT (with the current `version`). */
  readonly ifVersion?: number;
  /** The session that holds the player: required while one does (SESSION_LOCKED / SESSION_LOST). */
  readonly sessionId?: string;
}

export interface Entry<T extends Value = Value> {
  /** undefined when the player or the key does not exist. */
  readonly value: T | undefined;
  readonly updatedAt: string | undefined;
  readonly version: number;
}

export interface PlayerValues {
  /** Every key with its value; {} when the player has no data. */
  readonly values: Record<string, Value>;
  /** False when the player has no data (version is then 0, or the version after a delete of everything). */
  readonly exists: boolean;
  readonly version: number;
}

export interface SetResult {
  readonly key: string;
  readonly value: Value;
  readonly updatedAt: string;
  readonly version: number;
}

export interface IncrementResult {
  readonly value: number;
  readonly version: number;
}

export interface DeleteResult {
  readonly deleted: number;
  readonly version: number;
}

export type BatchOp =
  | { readonly op: 'set'; readonly key: string; readonly value: Value }
  | { readonly op: 'increment'; readonly key: string; readonly amount?: number; readonly defaultValue?: number }
  | { readonly op: 'delete'; readonly key: string };

/** One per op, in order: a set's stored entry, an increment's new value, a delete's count. */
export type BatchOpResult =
  | { readonly key: string; readonly value: Value; readonly updatedAt: string }
  | { readonly key: string; readonly value: number }
  | { readonly key: string; readonly deleted: number };

export interface BatchOptions extends ConditionalWriteOptions {
  /** With sessionId: release the session once the batch is applied, in the same step. */
  readonly release?: boolean;
  /**
   * Ids of the messages this save processed (at most 100): removed in the same step as the ops,
   * fenced by the session like them. An id no longer waiting is no error (a retried save).
   */
  readonly ackMessages?: readonly string[];
}

export interface BatchResult {
  readonly results: BatchOpResult[];
  readonly version: number;
  /**
   * With a sessionId (and without release): the messages that arrived for the player since its
   * session was last handed some, oldest first; [] when none did. Absent otherwise.
   */
  readonly messages?: DeliveredMessage[];
}

export interface PlayerBatch {
  readonly userId: UserId;
  readonly ops: readonly BatchOp[];
  readonly ifVersion?: number;
  readonly sessionId?: string;
  readonly release?: boolean;
  /** As BatchOptions.ackMessages, for this player. */
  readonly ackMessages?: readonly string[];
}

/** A failed player carries the error its own request would have raised (code, status, version, data). */
export type PlayerBatchOutcome =
  | {
      readonly userId: string;
      readonly success: true;
      readonly version: number;
      readonly results: BatchOpResult[];
      /** As BatchResult.messages, for this player. */
      readonly messages?: DeliveredMessage[];
    }
  | { readonly userId: string; readonly success: false; readonly error: PlayerDataError };

export interface AcquireOptions extends WriteOptions {
  /** 30-3600, default 300 (the service's). */
  readonly ttlSeconds?: number;
  /** Take the lock over from a live holder at once; its next write is SESSION_LOST. */
  readonly steal?: boolean;
  /** Also answer the player's whole data (`values`) and its waiting messages, so that a join costs one request. */
  readonly load?: boolean;
}

export interface RenewOptions extends WriteOptions {
  /** Default: the session's own. */
  readonly ttlSeconds?: number;
}

export interface Session {
  readonly sessionId: string;
  readonly userId: string;
  readonly owner: string;
  readonly expiresAt: string;
  /** The player's version. */
  readonly version: number;
}

/** What the service keeps about a player beside its data (not in its keys), answered by every acquire. */
export interface SessionMetadata {
  /** When the player's first session was acquired. */
  readonly firstSessionAt: string;
  /** Sessions acquired so far, this one counted. A player released without ever keeping data starts again at 1. */
  readonly sessionCount: number;
}

export interface AcquiredSession extends Session {
  readonly metadata: SessionMetadata;
}

export interface LoadedSession extends AcquiredSession {
  /** The player's whole data; {} for a new player. */
  readonly values: Record<string, Value>;
  /** Every message waiting for the player, oldest first: apply each, then acknowledge it with a save (ackMessages). */
  readonly messages: DeliveredMessage[];
}

/** One player of acquireSessions: its session, or the error its own acquire would have raised (SESSION_LOCKED, ...). */
export type SessionOutcome<S extends AcquiredSession = AcquiredSession> =
  | (S & { readonly success: true })
  | { readonly userId: string; readonly success: false; readonly error: PlayerDataError };

/** A message as a session is handed it (acquire with load, a save's answer). */
export interface DeliveredMessage<T extends JsonValue = JsonValue> {
  /** `msg_...`: what a save acknowledges. */
  readonly id: string;
  /** The JSON the sender sent. */
  readonly message: T;
  readonly sentAt: string;
}

/** A message waiting for its player, as getMessages lists it. */
export interface WaitingMessage<T extends JsonValue = JsonValue> extends DeliveredMessage<T> {
  /** When it is dropped if no session has acknowledged it by then. */
  readonly expiresAt: string;
}

export interface SendMessageOptions extends WriteOptions {
  /** How long it waits to be processed: 60 s up to the service's MESSAGE_MAX_TTL_SECONDS (90 days); default 30 days. */
  readonly ttlSeconds?: number;
}

export interface SentMessage {
  readonly messageId: string;
  readonly sentAt: string;
  readonly expiresAt: string;
}

export interface ListVersionsOptions extends CallOptions {
  /** Versions a page, 1-100 (default 20). */
  readonly limit?: number;
  /** A page's `nextBefore`: the versions below it. */
  readonly before?: number;
}

/** One version of a player, as its history keeps it (docs/history.md). */
export interface VersionInfo {
  readonly version: number;
  /**
   * For a restore point, the first write after it: when it ran (the version is the data just
   * before), what kind, who (`key:<id>` or `admin:<actor>`) and the keys written after it in its
   * interval. All null for the current version (and for a version 0 known without a point).
   */
  readonly time: string | null;
  readonly kind: string | null;
  readonly by: string | null;
  readonly keys: string[] | null;
}

export interface VersionsPage {
  readonly userId: string;
  /** The player's current version. */
  readonly version: number;
  /** Newest first: the current version, then its restore points; each can be read with getVersion. */
  readonly versions: VersionInfo[];
  /** Pass as `before` for the next page; null on the last one. */
  readonly nextBefore: number | null;
}

export interface ListPlayersOptions extends CallOptions {
  /** Only players whose user id starts with this (1-64 characters from A-Z a-z 0-9 _ . -). */
  readonly prefix?: string;
  /** Only players holding this data key. */
  readonly hasKey?: string;
  /** Players a page, 1-1000 (default 100). */
  readonly limit?: number;
  /** The page before's `next`, asked with the same prefix and hasKey. */
  readonly cursor?: string;
}

export interface PlayersPage {
  /** At most `limit`; fewer, even none, is possible before the last page (docs/api.md). */
  readonly players: { readonly userId: string; readonly lastWriteAt: string }[];
  /** Pass as `cursor` for the next page; null once every player was walked. */
  readonly next: string | null;
}

export interface PlayerAtVersion {
  readonly userId: string;
  /** The version read. */
  readonly version: number;
  /** The player's version now. */
  readonly currentVersion: number;
  /** Every key with its value at that version ({} when the player had no data then): what a save brings back. */
  readonly values: Record<string, Value>;
  /** The same keys with when each was last written before that version. */
  readonly updatedAt: Record<string, string>;
}

export interface ReleaseResult {
  /** False when the session no longer held the player (release is idempotent). */
  readonly released: boolean;
  readonly version: number;
}
