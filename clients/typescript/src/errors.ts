// The one error the client throws for anything the service refused or could not answer, and the
// codes it carries. Callers decide by `code`, never by the message, whose wording may change.

export type Operation =
  | 'init'
  | 'ping'
  | 'get'
  | 'getAll'
  | 'getVersioned'
  | 'getAllVersioned'
  | 'set'
  | 'increment'
  | 'incrementVersioned'
  | 'delete'
  | 'deleteVersioned'
  | 'batch'
  | 'batchPlayers'
  | 'acquireSession'
  | 'acquireSessions'
  | 'renewSession'
  | 'releaseSession'
  | 'sendMessage'
  | 'getMessages'
  | 'listVersions'
  | 'getVersion'
  | 'listPlayers'
  | 'leaderboard'
  | 'leaderboard.set'
  | 'leaderboard.increment'
  | 'leaderboard.delete'
  | 'leaderboard.top'
  | 'leaderboard.page'
  | 'leaderboard.pages'
  | 'leaderboard.rank'
  | 'leaderboard.around';

/** The service's codes (docs/safe-saves.md; src/errors.ts of the service). */
export type ServerErrorCode =
  | 'INVALID_REQUEST'
  | 'UNAUTHORIZED'
  | 'KEY_REVOKED'
  | 'KEY_EXPIRED'
  | 'FORBIDDEN'
  | 'STORAGE_QUOTA_EXCEEDED'
  | 'PLAYER_NOT_FOUND'
  | 'KEY_NOT_FOUND'
  | 'VERSION_NOT_RETAINED'
  | 'NOT_FOUND'
  | 'METHOD_NOT_ALLOWED'
  | 'REQUEST_TIMEOUT'
  | 'VERSION_CONFLICT'
  | 'NOT_A_NUMBER'
  | 'NUMBER_OUT_OF_RANGE'
  | 'TOO_MANY_KEYS'
  | 'TOO_MANY_BOARDS'
  | 'BOARD_FULL'
  | 'PERIOD_NOT_KEPT'
  | 'SESSION_LOCKED'
  | 'SESSION_LOST'
  | 'IDEMPOTENCY_IN_PROGRESS'
  | 'INBOX_FULL'
  | 'CONFLICT'
  | 'PAYLOAD_TOO_LARGE'
  | 'PLAYER_TOO_LARGE'
  | 'UNSUPPORTED_MEDIA_TYPE'
  | 'IDEMPOTENCY_KEY_REUSED'
  | 'REQUEST_HEADERS_TOO_LARGE'
  | 'RATE_LIMITED'
  | 'INTERNAL'
  | 'STORAGE_UNAVAILABLE'
  | 'OUTCOME_UNKNOWN';

/**
 * Codes the client gives when no usable answer arrived (status 0, except INVALID_ANSWER, which
 * keeps the status of an answer that was not the service's JSON).
 */
export type ClientErrorCode = 'NETWORK_ERROR' | 'TIMEOUT' | 'ABORTED' | 'INVALID_ANSWER' | 'UNKNOWN';

// `string & {}` keeps autocompletion of the known codes while accepting codes added later.
export type ErrorCode = ServerErrorCode | ClientErrorCode | (string & {});

export interface ErrorDetails {
  /** The service's `code`; for failures without an answer, one of ClientErrorCode. */
  code?: ErrorCode;
  /** The player's version when the answer carried one (VERSION_CONFLICT, the 404s of get). */
  version?: number;
  /** The answer's `data`, e.g. the holder `{owner, expiresAt}` of SESSION_LOCKED. */
  data?: unknown;
  /** How many requests this call made before it gave up. */
  attempts?: number;
  cause?: unknown;
}

export class PlayerDataError extends Error {
  override name = 'PlayerDataError';
  readonly code: ErrorCode;
  readonly version: number | undefined;
  readonly data: unknown;
  readonly attempts: number;

  constructor(
    /** The client function that failed. */
    readonly operation: Operation,
    /** HTTP status of the answer; 0 when no HTTP answer arrived (network error, timeout, abort). */
    readonly status: number,
    /** The service's `error` text, or what went wrong on the way. */
    readonly serverMessage: string,
    /** For a 429: seconds until the rate limit window resets (the Retry-After header). */
    readonly retryAfterSeconds?: number,
    details: ErrorDetails = {},
  ) {
    super(
      status === 0
        ? `PlayerData.${operation}: request failed: ${serverMessage}`
        : `PlayerData.${operation}: HTTP ${status}: ${serverMessage}` +
            (retryAfterSeconds === undefined ? '' : ` (retry after ${retryAfterSeconds} s)`),
      details.cause === undefined ? undefined : { cause: details.cause },
    );
    this.code = details.code ?? (status === 0 ? 'NETWORK_ERROR' : 'UNKNOWN');
    this.version = details.version;
    this.data = details.data;
    this.attempts = details.attempts ?? 1;
  }

  /**
   * Whether the same request may succeed later: no answer (not an abort), a 5xx, or
   * IDEMPOTENCY_IN_PROGRESS. The client has already retried these as its `retry` settings allow.
   * A 429 means call less often.
   */
  get retryable(): boolean {
    if (this.status === 0) return this.code !== 'ABORTED';
    return this.status >= 500 || this.code === 'IDEMPOTENCY_IN_PROGRESS';
  }
}
