// The fleet test's game-server side of HTTP: one logical write as one or more attempts, with the
// retries docs/safe-saves.md documents ("Which to retry"): no answer, a 5xx and
// IDEMPOTENCY_IN_PROGRESS are sent again with the same Idempotency-Key and the same bytes, with
// exponential backoff and full jitter; a 429 after its Retry-After. Every attempt is recorded, so
// the test can count what failed on the way, not only what failed in the end.
import { request as httpRequest, Agent } from 'node:http';

export interface Attempt {
  readonly sentAt: number;
  readonly at: number;
  /** HTTP status, or 0 when no answer came (connection refused or reset, timeout). */
  readonly status: number;
  readonly body: Record<string, any> | undefined;
  readonly replayed: boolean;
  /** Retry-After in seconds, when the answer had one. */
  readonly retryAfter: number | undefined;
}

export interface CallResult {
  readonly attempts: Attempt[];
  /** The last attempt's answer. */
  readonly last: Attempt;
}

export interface CallOptions {
  /** Most attempts, the first included. */
  readonly maxAttempts: number;
  /** No new attempt starts after this time (epoch ms). */
  readonly deadline: number;
}

// Idle connections are dropped after 4 s, before HAProxy's `timeout http-keep-alive` (10 s) closes
// them: a request sent on a connection the balancer is closing gets no answer (one run lost one
// request of 15 players so, at once, on a connection idle 10 s).
const agent = new Agent({ keepAlive: true, maxSockets: 256, timeout: 4000 });

/** Whether an answer is one the documentation says to send again (same key, same bytes). */
export function retryable(status: number, code: string | undefined): boolean {
  if (status === 0 || status >= 500) return true;
  return status === 409 && code === 'IDEMPOTENCY_IN_PROGRESS';
}

function once(url: URL, apiKey: string, body: string, idempotencyKey: string): Promise<Attempt> {
  const sentAt = Date.now();
  return new Promise((resolve) => {
    const req = httpRequest(
      url,
      {
        method: 'POST',
        agent,
        timeout: 10_000,
        headers: {
          'content-type': 'application/json',
          'content-length': Buffer.byteLength(body),
          'x-api-key': apiKey,
          'idempotency-key': idempotencyKey,
        },
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('error', () => resolve(noAnswer(sentAt)));
        res.on('end', () => {
          let parsed: Record<string, any> | undefined;
          try {
            const value: unknown = JSON.parse(Buffer.concat(chunks).toString('utf8'));
            parsed = value && typeof value === 'object' ? (value as Record<string, any>) : undefined;
          } catch {
            parsed = undefined; // HAProxy's own 502/503 pages are HTML
          }
          const retryAfter = Number(res.headers['retry-after'] ?? NaN);
          resolve({
            sentAt,
            at: Date.now(),
            status: res.statusCode ?? 0,
            body: parsed,
            replayed: res.headers['idempotent-replayed'] === 'true',
            retryAfter: Number.isFinite(retryAfter) ? retryAfter : undefined,
          });
        });
      },
    );
    req.on('timeout', () => req.destroy(new Error('timeout')));
    req.on('error', () => resolve(noAnswer(sentAt)));
    req.end(body);
  });
}

function noAnswer(sentAt: number): Attempt {
  return { sentAt, at: Date.now(), status: 0, body: undefined, replayed: false, retryAfter: undefined };
}

/**
 * POSTs `body` to `baseUrl + path` until an answer that is not to be retried, or the attempts or
 * the deadline run out. `again(attempt)` may ask for another attempt of a 200 (a many-player
 * answer whose players failed retryably: the same request and key replays the players written
 * and writes the others, docs/safe-saves.md).
 */
export async function call(
  baseUrl: string,
  apiKey: string,
  path: string,
  payload: unknown,
  idempotencyKey: string,
  options: CallOptions,
  again: (attempt: Attempt) => boolean = () => false,
): Promise<CallResult> {
  const url = new URL(baseUrl + path);
  const body = JSON.stringify(payload);
  const attempts: Attempt[] = [];
  for (let n = 1; ; n++) {
    const attempt = await once(url, apiKey, body, idempotencyKey);
    attempts.push(attempt);
    const code = typeof attempt.body?.['code'] === 'string' ? (attempt.body['code'] as string) : undefined;
    const retry = attempt.status === 429 || retryable(attempt.status, code) || (attempt.status === 200 && again(attempt));
    if (!retry || n >= options.maxAttempts) return { attempts, last: attempt };
    const backoff = Math.random() * Math.min(2000, 100 * 2 ** (n - 1));
    const wait = attempt.retryAfter !== undefined ? Math.max(backoff, attempt.retryAfter * 1000) : backoff;
    if (Date.now() + wait > options.deadline) return { attempts, last: attempt };
    await new Promise((r) => setTimeout(r, wait));
  }
}
