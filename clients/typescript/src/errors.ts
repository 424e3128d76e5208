// The one error the client throws for anything the service refused or could not answer.

export type Operation = 'init' | 'ping' | 'get' | 'getAll' | 'set' | 'increment' | 'delete';

export class PlayerDataError extends Error {
  override name = 'PlayerDataError';

  constructor(
    /** The client function that failed. */
    readonly operation: Operation,
    /** HTTP status of the answer; 0 when no HTTP answer arrived (network error, timeout). */
    readonly status: number,
    /** The service's `error` text, or what went wrong on the way. */
    readonly serverMessage: string,
    /** For a 429: seconds until the rate limit window resets (the Retry-After header). */
    readonly retryAfterSeconds?: number,
    options?: { cause?: unknown },
  ) {
    super(
      status === 0
        ? `PlayerData.${operation}: request failed: ${serverMessage}`
        : `PlayerData.${operation}: HTTP ${status}: ${serverMessage}` +
            (retryAfterSeconds === undefined ? '' : ` (retry after ${retryAfterSeconds} s)`),
      options,
    );
  }

  /** Whether trying again later can succeed: no answer, or a 5xx. A 429 means call less often. */
  get retryable(): boolean {
    return this.status === 0 || this.status >= 500;
  }
}
