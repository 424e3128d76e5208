// One error vocabulary for the whole service: the codes, their HTTP status, and AppError.
// 4xx messages are shown to the caller as written; 5xx messages are replaced by a generic one.

export const ErrorCode = {
  BAD_REQUEST: 'BAD_REQUEST',
  UNAUTHORIZED: 'UNAUTHORIZED',
  FORBIDDEN: 'FORBIDDEN',
  NOT_FOUND: 'NOT_FOUND',
  METHOD_NOT_ALLOWED: 'METHOD_NOT_ALLOWED',
  CONFLICT: 'CONFLICT',
  PAYLOAD_TOO_LARGE: 'PAYLOAD_TOO_LARGE',
  UNSUPPORTED_MEDIA_TYPE: 'UNSUPPORTED_MEDIA_TYPE',
  RATE_LIMITED: 'RATE_LIMITED',
  INTERNAL: 'INTERNAL',
  STORAGE_UNAVAILABLE: 'STORAGE_UNAVAILABLE',
} as const;
export type ErrorCode = (typeof ErrorCode)[keyof typeof ErrorCode];

export const STATUS_OF: Readonly<Record<ErrorCode, number>> = {
  BAD_REQUEST: 400,
  UNAUTHORIZED: 401,
  FORBIDDEN: 403,
  NOT_FOUND: 404,
  METHOD_NOT_ALLOWED: 405,
  CONFLICT: 409,
  PAYLOAD_TOO_LARGE: 413,
  UNSUPPORTED_MEDIA_TYPE: 415,
  RATE_LIMITED: 429,
  INTERNAL: 500,
  STORAGE_UNAVAILABLE: 503,
};

export class AppError extends Error {
  override name = 'AppError';
  readonly status: number;
  /** Whether `message` may be shown to the caller (true for 4xx). */
  readonly expose: boolean;
  readonly headers: Readonly<Record<string, string>>;

  constructor(
    readonly code: ErrorCode,
    message: string,
    options: { headers?: Record<string, string>; cause?: unknown } = {},
  ) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.status = STATUS_OF[code];
    this.expose = this.status < 500 || code === ErrorCode.STORAGE_UNAVAILABLE;
    this.headers = options.headers ?? {};
  }
}

export const badRequest = (message: string) => new AppError(ErrorCode.BAD_REQUEST, message);
export const notFound = (message: string) => new AppError(ErrorCode.NOT_FOUND, message);
export const conflict = (message: string) => new AppError(ErrorCode.CONFLICT, message);
export const unauthorized = (message = 'Missing or invalid API key') =>
  new AppError(ErrorCode.UNAUTHORIZED, message);
export const forbidden = (message: string) => new AppError(ErrorCode.FORBIDDEN, message);
export const storageUnavailable = (cause?: unknown) =>
  new AppError(ErrorCode.STORAGE_UNAVAILABLE, 'Storage unavailable', { cause });

/** The body every error response carries. */
export function errorBody(message: string): { success: false; error: string } {
  return { success: false, error: message };
}
