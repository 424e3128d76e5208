// One error vocabulary for the whole service: the codes, their HTTP status, AppError (a code, a
// message, headers such as Retry-After, and extras: the player's version, the lock holder), and
// the body every error answer carries. 4xx messages are shown to the caller as written, and so
// are the two 503s' (STORAGE_UNAVAILABLE, OUTCOME_UNKNOWN: they say whether a retry is safe);
// other 5xx messages are replaced by a generic one. Clients decide by `code`, never by the
// message. The table is published in docs/safe-saves.md (test/docs/error-codes.test.ts holds it
// to this one), and the OpenAPI document's error body lists the codes.

export const ErrorCode = {
  INVALID_REQUEST: 'INVALID_REQUEST',
  UNAUTHORIZED: 'UNAUTHORIZED',
  KEY_REVOKED: 'KEY_REVOKED',
  KEY_EXPIRED: 'KEY_EXPIRED',
  FORBIDDEN: 'FORBIDDEN',
  STORAGE_QUOTA_EXCEEDED: 'STORAGE_QUOTA_EXCEEDED',
  PLAYER_NOT_FOUND: 'PLAYER_NOT_FOUND',
  KEY_NOT_FOUND: 'KEY_NOT_FOUND',
  VERSION_NOT_RETAINED: 'VERSION_NOT_RETAINED',
  PERIOD_NOT_KEPT: 'PERIOD_NOT_KEPT',
  NOT_FOUND: 'NOT_FOUND',
  METHOD_NOT_ALLOWED: 'METHOD_NOT_ALLOWED',
  ADMIN_API_OFF: 'ADMIN_API_OFF',
  REQUEST_TIMEOUT: 'REQUEST_TIMEOUT',
  VERSION_CONFLICT: 'VERSION_CONFLICT',
  NOT_A_NUMBER: 'NOT_A_NUMBER',
  NUMBER_OUT_OF_RANGE: 'NUMBER_OUT_OF_RANGE',
  TOO_MANY_KEYS: 'TOO_MANY_KEYS',
  TOO_MANY_BOARDS: 'TOO_MANY_BOARDS',
  BOARD_FULL: 'BOARD_FULL',
  SESSION_LOCKED: 'SESSION_LOCKED',
  SESSION_LOST: 'SESSION_LOST',
  IDEMPOTENCY_IN_PROGRESS: 'IDEMPOTENCY_IN_PROGRESS',
  INBOX_FULL: 'INBOX_FULL',
  CONFLICT: 'CONFLICT',
  ERASURE_NOT_CONFIGURED: 'ERASURE_NOT_CONFIGURED',
  PAYLOAD_TOO_LARGE: 'PAYLOAD_TOO_LARGE',
  PLAYER_TOO_LARGE: 'PLAYER_TOO_LARGE',
  UNSUPPORTED_MEDIA_TYPE: 'UNSUPPORTED_MEDIA_TYPE',
  IDEMPOTENCY_KEY_REUSED: 'IDEMPOTENCY_KEY_REUSED',
  REQUEST_HEADERS_TOO_LARGE: 'REQUEST_HEADERS_TOO_LARGE',
  RATE_LIMITED: 'RATE_LIMITED',
  INTERNAL: 'INTERNAL',
  STORAGE_UNAVAILABLE: 'STORAGE_UNAVAILABLE',
  OUTCOME_UNKNOWN: 'OUTCOME_UNKNOWN',
} as const;
export type ErrorCode = (typeof ErrorCode)[keyof typeof ErrorCode];

export const STATUS_OF: Readonly<Record<ErrorCode, number>> = {
  INVALID_REQUEST: 400,
  UNAUTHORIZED: 401,
  KEY_REVOKED: 401,
  KEY_EXPIRED: 401,
  FORBIDDEN: 403,
  STORAGE_QUOTA_EXCEEDED: 403,
  PLAYER_NOT_FOUND: 404,
  KEY_NOT_FOUND: 404,
  VERSION_NOT_RETAINED: 404,
  PERIOD_NOT_KEPT: 404,
  NOT_FOUND: 404,
  METHOD_NOT_ALLOWED: 405,
  ADMIN_API_OFF: 404,
  REQUEST_TIMEOUT: 408,
  VERSION_CONFLICT: 409,
  NOT_A_NUMBER: 409,
  NUMBER_OUT_OF_RANGE: 409,
  TOO_MANY_KEYS: 409,
  TOO_MANY_BOARDS: 409,
  BOARD_FULL: 409,
  SESSION_LOCKED: 409,
  SESSION_LOST: 409,
  IDEMPOTENCY_IN_PROGRESS: 409,
  INBOX_FULL: 409,
  CONFLICT: 409,
  ERASURE_NOT_CONFIGURED: 409,
  PAYLOAD_TOO_LARGE: 413,
  PLAYER_TOO_LARGE: 413,
  UNSUPPORTED_MEDIA_TYPE: 415,
  IDEMPOTENCY_KEY_REUSED: 422,
  REQUEST_HEADERS_TOO_LARGE: 431,
  RATE_LIMITED: 429,
  INTERNAL: 500,
  STORAGE_UNAVAILABLE: 503,
  OUTCOME_UNKNOWN: 503,
};

/** Fields some errors carry beside the message: the player's `version`, the lock holder in `data`. */
export interface ErrorExtras {
  readonly version?: number;
  readonly data?: Readonly<Record<string, unknown>>;
}

export class AppError extends Error {
  override name = 'AppError';
  readonly status: number;
  /** Whether `message` may be shown to the caller (true for 4xx). */
  readonly expose: boolean;
  readonly headers: Readonly<Record<string, string>>;
  readonly extras: ErrorExtras;

  constructor(
    readonly code: ErrorCode,
    message: string,
    options: { headers?: Record<string, string>; cause?: unknown; extras?: ErrorExtras } = {},
  ) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.status = STATUS_OF[code];
    this.expose = this.status < 500 || code === ErrorCode.STORAGE_UNAVAILABLE || code === ErrorCode.OUTCOME_UNKNOWN;
    this.headers = options.headers ?? {};
    this.extras = options.extras ?? {};
  }
}

/** 429 of the per-workspace byte budget (http/byte-budget.ts), not of the plan's request limit. */
export const byteBudgetExceeded = (bytesPerSecond: number, retryAfterSeconds: number) =>
  new AppError(
    ErrorCode.RATE_LIMITED,
    `This workspace's byte budget on this instance (large bodies, answers and what its writes copy inside Redis: ${bytesPerSecond} bytes a second, WORKSPACE_BYTES_PER_SECOND) is spent; this is not the plan's request limit: retry in ${retryAfterSeconds} s`,
    { headers: { 'Retry-After': String(retryAfterSeconds) } },
  );

export const badRequest = (message: string) => new AppError(ErrorCode.INVALID_REQUEST, message);
export const notFound = (message: string, code: ErrorCode = ErrorCode.NOT_FOUND) => new AppError(code, message);
export const conflict = (message: string) => new AppError(ErrorCode.CONFLICT, message);
export const unauthorized = (message = 'Missing or invalid API key', code: ErrorCode = ErrorCode.UNAUTHORIZED) =>
  new AppError(code, message);
export const forbidden = (message: string) => new AppError(ErrorCode.FORBIDDEN, message);
/** Seconds a caller is asked to wait after a 503: Redis restarts and failovers take about that. */
export const STORAGE_RETRY_AFTER_SECONDS = 1;
export const storageUnavailable = (cause?: unknown) =>
  new AppError(ErrorCode.STORAGE_UNAVAILABLE, 'Storage unavailable', {
    cause,
    headers: { 'Retry-After': String(STORAGE_RETRY_AFTER_SECONDS) },
  });
/**
 * A write sent to Redis whose answer never came (the command timed out, or the connection
 * dropped after it left): it may have been applied or not. Only a retry with the same
 * Idempotency-Key is safe: it is applied at most once.
 */
export const outcomeUnknown = (cause?: unknown) =>
  new AppError(
    ErrorCode.OUTCOME_UNKNOWN,
    'The write was sent to storage but its outcome is unknown (no answer in time): it may or may not have been applied. Retry it with the same Idempotency-Key, which applies it at most once',
    { cause, headers: { 'Retry-After': String(STORAGE_RETRY_AFTER_SECONDS) } },
  );

export interface ErrorBody extends ErrorExtras {
  readonly success: false;
  readonly error: string;
  readonly code: ErrorCode;
}

/** The body every error response carries. */
export function errorBody(message: string, code: ErrorCode, extras: ErrorExtras = {}): ErrorBody {
  return { success: false, error: message, code, ...extras };
}

/** The body of an AppError as the caller sees it: 5xx messages hidden. */
export function errorBodyOf(error: AppError): ErrorBody {
  return errorBody(error.expose ? error.message : 'Internal server error', error.code, error.extras);
}
