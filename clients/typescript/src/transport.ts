// Transport: one logical call to the service, as one or more HTTP attempts. Owns the x-api-key
// and Idempotency-Key headers, the per-attempt timeout, the caller's AbortSignal, and which
// failures are tried again (docs/safe-saves.md, "Which to retry"): no answer, a 5xx and
// IDEMPOTENCY_IN_PROGRESS, with exponential backoff and full jitter; a 429 only when its
// Retry-After is within the configured wait. Every other answer goes back to the caller as is.
import { PlayerDataError, type ClientErrorCode, type Operation } from './errors.js';

export interface RetryConfig {
  /** Requests a call may make in all, the first included (default 3; 1 turns retries off). */
  readonly attempts?: number;
  /** The backoff's first ceiling; attempt n waits a random time in [0, base * 2^(n-1)] (default 100 ms). */
  readonly baseDelayMs?: number;
  /** The backoff's largest ceiling (default 2 000 ms). */
  readonly maxDelayMs?: number;
  /**
   * The longest Retry-After a 429 is waited for before trying again (default 0: a 429 fails at
   * once with RATE_LIMITED, since it means the workspace should call less often).
   */
  readonly maxRateLimitWaitMs?: number;
}

export interface TransportConfig {
  readonly baseUrl: string;
  readonly apiKey: string;
  readonly timeoutMs: number;
  readonly retry: Required<RetryConfig>;
}

export interface Answer {
  readonly status: number;
  /** The parsed JSON object, or undefined when the answer was not a JSON object. */
  readonly body: Record<string, any> | undefined;
  readonly headers: Headers;
  /** Requests made for this call, this one included. */
  readonly attempts: number;
}

export interface Request {
  readonly operation: Operation;
  readonly method: 'GET' | 'POST';
  readonly path: string;
  /** The JSON body, serialized once so that every retry sends the same bytes. */
  readonly body?: string;
  readonly idempotencyKey?: string;
  readonly signal?: AbortSignal | undefined;
}

class NoAnswer extends Error {
  constructor(
    readonly code: ClientErrorCode,
    message: string,
    options?: { cause?: unknown },
  ) {
    super(message, options);
  }
}

/** The answer's Retry-After in seconds (for a 429), or undefined. */
export function retryAfterSeconds(answer: Answer): number | undefined {
  const seconds = Number(answer.headers.get('retry-after') ?? NaN);
  return Number.isFinite(seconds) && seconds >= 0 ? seconds : undefined;
}

function abortedError(request: Request, attempts: number): PlayerDataError {
  return new PlayerDataError(request.operation, 0, 'aborted by the caller', undefined, {
    code: 'ABORTED',
    attempts,
    cause: request.signal?.reason,
  });
}

/** Resolves after `ms`, or rejects with NoAnswer('ABORTED') as soon as `signal` aborts. */
function sleep(ms: number, signal: AbortSignal | undefined): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(new NoAnswer('ABORTED', 'aborted'));
    const onAbort = () => {
      clearTimeout(timer);
      reject(new NoAnswer('ABORTED', 'aborted'));
    };
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}

export class Transport {
  constructor(private readonly config: TransportConfig) {}

  /**
   * The final answer of the call (success or not), after the retries its failures allow.
   * Rejects with PlayerDataError only when no answer arrived (network, timeout, abort).
   */
  async send(request: Request, firstAttempt = 1): Promise<Answer> {
    const { attempts: maxAttempts, baseDelayMs, maxDelayMs, maxRateLimitWaitMs } = this.config.retry;
    for (let attempt = firstAttempt; ; attempt += 1) {
      if (request.signal?.aborted) throw abortedError(request, attempt - 1);
      let answer: Answer;
      try {
        answer = await this.attempt(request, attempt);
      } catch (err) {
        if (!(err instanceof NoAnswer)) throw err;
        if (err.code === 'ABORTED') throw abortedError(request, attempt);
        if (attempt >= maxAttempts) {
          throw new PlayerDataError(request.operation, 0, err.message, undefined, {
            code: err.code,
            attempts: attempt,
            cause: err.cause,
          });
        }
        await this.pause(request, attempt, backoff(attempt, baseDelayMs, maxDelayMs));
        continue;
      }
      if (attempt >= maxAttempts) return answer;
      if (answer.status === 429) {
        const seconds = retryAfterSeconds(answer);
        if (seconds === undefined || seconds * 1000 > maxRateLimitWaitMs) return answer;
        // The jitter spreads the servers that all waited for the same window reset.
        await this.pause(request, attempt, seconds * 1000 + Math.random() * baseDelayMs);
        continue;
      }
      const inProgress = answer.status === 409 && answer.body?.['code'] === 'IDEMPOTENCY_IN_PROGRESS';
      if (answer.status < 500 && !inProgress) return answer;
      await this.pause(request, attempt, backoff(attempt, baseDelayMs, maxDelayMs));
    }
  }

  /**
   * A many-player request answered 200 with some players failed alone (`retrying`: a 5xx each,
   * their Redis node failing over; or a 429 whose Retry-After the settings wait for): the same
   * request sent again (same body, same Idempotency-Key, so the service replays the players
   * already done and writes only those), after the longer of the backoff and the answer's
   * Retry-After; undefined once the retry settings' attempts are spent.
   */
  async sendAgain(request: Request, answer: Answer, retrying: { readonly status: number }): Promise<Answer | undefined> {
    const { attempts: maxAttempts, baseDelayMs, maxDelayMs, maxRateLimitWaitMs } = this.config.retry;
    if (answer.attempts >= maxAttempts) return undefined;
    const seconds = retryAfterSeconds(answer) ?? 0;
    if (retrying.status === 429 && seconds * 1000 > maxRateLimitWaitMs) return undefined;
    const ms = retrying.status === 429 ? seconds * 1000 + Math.random() * baseDelayMs : Math.min(maxDelayMs, Math.max(seconds * 1000, backoff(answer.attempts, baseDelayMs, maxDelayMs)));
    await this.pause(request, answer.attempts, ms);
    return this.send(request, answer.attempts + 1);
  }

  private async pause(request: Request, attempt: number, ms: number): Promise<void> {
    try {
      await sleep(ms, request.signal);
    } catch {
      throw abortedError(request, attempt);
    }
  }

  private async attempt(request: Request, attempt: number): Promise<Answer> {
    const headers: Record<string, string> = { 'x-api-key': this.config.apiKey };
    if (request.body !== undefined) headers['content-type'] = 'application/json';
    if (request.idempotencyKey !== undefined) headers['idempotency-key'] = request.idempotencyKey;

    // One controller per attempt, aborted by the attempt's timeout or by the caller's signal.
    const controller = new AbortController();
    let timedOut = false;
    const timer = setTimeout(() => {
      timedOut = true;
      controller.abort();
    }, this.config.timeoutMs);
    const onAbort = () => controller.abort();
    request.signal?.addEventListener('abort', onAbort, { once: true });
    let res: Response;
    let text: string;
    try {
      res = await fetch(this.config.baseUrl + request.path, {
        method: request.method,
        headers,
        body: request.body,
        signal: controller.signal,
      });
      text = await res.text();
    } catch (err) {
      if (request.signal?.aborted) throw new NoAnswer('ABORTED', 'aborted', { cause: err });
      if (timedOut) throw new NoAnswer('TIMEOUT', `no answer within ${this.config.timeoutMs} ms`, { cause: err });
      const reason = err instanceof Error ? ((err.cause as Error | undefined)?.message ?? err.message) : String(err);
      throw new NoAnswer('NETWORK_ERROR', reason, { cause: err });
    } finally {
      clearTimeout(timer);
      request.signal?.removeEventListener('abort', onAbort);
    }
    let body: unknown;
    try {
      body = JSON.parse(text);
    } catch {
      body = undefined;
    }
    const object = typeof body === 'object' && body !== null && !Array.isArray(body) ? (body as Record<string, any>) : undefined;
    return { status: res.status, body: object, headers: res.headers, attempts: attempt };
  }
}

/** Full jitter (AWS Architecture Blog, "Exponential Backoff And Jitter"): uniform in [0, ceiling]. */
function backoff(attempt: number, baseDelayMs: number, maxDelayMs: number): number {
  return Math.random() * Math.min(maxDelayMs, baseDelayMs * 2 ** (attempt - 1));
}
