// What the plan simulation's game servers share: a clock that runs `speedup` times faster than
// real time, and an HTTP client that counts every request and answer (by endpoint, by status,
// and per 10 simulated seconds, the plan's window), with the retry policy of the clients'
// contract (docs/safe-saves.md, "Which to retry").
import { randomUUID } from 'node:crypto';

/** Simulated seconds since the start; timers take simulated seconds too. */
export class SimClock {
  private readonly startedMs = performance.now();
  constructor(readonly speedup: number) {}
  now(): number {
    return ((performance.now() - this.startedMs) * this.speedup) / 1000;
  }
  /** Real milliseconds of `simSeconds`. */
  realMs(simSeconds: number): number {
    return (simSeconds * 1000) / this.speedup;
  }
  sleep(simSeconds: number): Promise<void> {
    return new Promise((resolve) => setTimeout(resolve, Math.max(0, this.realMs(simSeconds))));
  }
  until(simTime: number): Promise<void> {
    return this.sleep(simTime - this.now());
  }
}

export interface Answer {
  readonly status: number;
  readonly body: any;
}

/** The plan's window at full scale: Retry-After and the per-window counts are in these units. */
export const WINDOW_SECONDS = 10;
const BACKOFF_BASE_SECONDS = 0.5;
const BACKOFF_MAX_SECONDS = 8;
const ATTEMPTS = 5;

export class SimStats {
  readonly byEndpoint: Record<string, number> = {};
  readonly byStatus: Record<string, number> = {};
  /** Requests sent per window (index = floor(simulated time / 10 s)). */
  readonly perWindow: number[] = [];
  /** When each request was sent (simulated seconds), retries included. */
  readonly sentAt: number[] = [];
  /** When each 429 was answered (simulated seconds, the attempt's time), for BENCH_PLANS_DEBUG. */
  readonly rateLimitedAt: number[] = [];
  networkErrors = 0;
  retries = 0;
  /** Answers other than 200 and 429, with what was asked, for the report (the first few). */
  readonly unexpected: Array<{ endpoint: string; status: number; code?: string; error?: string }> = [];

  count(endpoint: string, at: number): void {
    this.byEndpoint[endpoint] = (this.byEndpoint[endpoint] ?? 0) + 1;
    this.sentAt.push(at);
    const w = Math.floor(at / WINDOW_SECONDS);
    while (this.perWindow.length <= w) this.perWindow.push(0);
    this.perWindow[w]!++;
  }
  answered(endpoint: string, answer: Answer): void {
    this.byStatus[answer.status] = (this.byStatus[answer.status] ?? 0) + 1;
    if (answer.status !== 200 && answer.status !== 429 && !(endpoint === 'GET /data' && answer.status === 404)) {
      if (this.unexpected.length < 20) {
        this.unexpected.push({ endpoint, status: answer.status, code: answer.body?.code, error: answer.body?.error });
      }
    }
  }
  /**
   * The most requests sent within any 10 simulated seconds: what the plan's window would hold
   * at full scale in the unluckiest alignment. Needed beside the service's own 429 count: at
   * x10 a burst that takes the service more than the scaled window to count (a shutdown of
   * hundreds of servers does) spills into the next window, which a 10 s window would not allow.
   */
  peakSlidingWindow(from = 0): number {
    const times = this.sentAt.filter((t) => t >= from).sort((a, b) => a - b);
    let peak = 0;
    for (let i = 0, j = 0; j < times.length; j++) {
      while (times[j]! - times[i]! >= WINDOW_SECONDS) i++;
      peak = Math.max(peak, j - i + 1);
    }
    return peak;
  }
  get rateLimited(): number {
    return this.byStatus['429'] ?? 0;
  }
  get requests(): number {
    return Object.values(this.byEndpoint).reduce((a, b) => a + b, 0);
  }
}

export interface SendOptions {
  readonly method: 'GET' | 'POST';
  readonly path: string;
  readonly body?: string;
  readonly idempotencyKey?: string;
  /** Wait out a 429 (until the deadline); otherwise a 429 is returned at once. */
  readonly waitOnRateLimit?: boolean;
  /** Simulated time after which no more waiting is started. */
  readonly deadline?: number;
  /** Checked before each wait: true gives up (a join cut short by the server's shutdown). */
  readonly abandon?: () => boolean;
}

/** undefined when no answer ever arrived (network errors past the attempts or the deadline). */
export type SendResult = Answer | undefined;

export class SimApi {
  constructor(
    private readonly baseUrl: string,
    private readonly apiKey: string,
    readonly clock: SimClock,
    readonly stats: SimStats,
  ) {}

  static newIdempotencyKey(): string {
    return randomUUID();
  }

  /**
   * One logical request, retried on network errors, 5xx and IDEMPOTENCY_IN_PROGRESS with
   * exponential backoff and jitter, with the same body and Idempotency-Key; a 429 is waited
   * out only when asked, and only within the deadline. The service's Retry-After is whole
   * seconds of real time, so under a sped-up clock it says 1 for any part of a window: the
   * wait is one full-scale window (10 s, the longest Retry-After at full scale) plus up to a
   * second of jitter, as the Luau client adds.
   */
  async send(options: SendOptions): Promise<SendResult> {
    const endpoint = `${options.method} ${options.path.split('?')[0]!.replace('/api/v1', '')}`;
    // The time the deadline is held to: waits count in simulated seconds, but the exchanges
    // themselves in real ones, since the service's own latency does not speed up with the
    // clock (at x10, a shutdown burst answered in 2 s would otherwise spend 20 of its 30 s).
    let spent = this.clock.now();
    for (let attempt = 1; ; attempt++) {
      // Counted at the full-scale time of the attempt: a retry after a 503 that took the
      // service 1 s (real) to give comes 1 s after the first try at full scale, not 10.
      this.stats.count(endpoint, spent);
      let answer: Answer | undefined;
      const sentAt = performance.now();
      try {
        const res = await fetch(this.baseUrl + options.path, {
          method: options.method,
          headers: {
            'x-api-key': this.apiKey,
            ...(options.body === undefined ? {} : { 'content-type': 'application/json' }),
            ...(options.idempotencyKey ? { 'idempotency-key': options.idempotencyKey } : {}),
          },
          body: options.body,
        });
        const text = await res.text();
        answer = { status: res.status, body: text ? JSON.parse(text) : undefined };
        this.stats.answered(endpoint, answer);
        if (answer.status === 429) this.stats.rateLimitedAt.push(spent);
      } catch {
        this.stats.networkErrors++;
      }
      spent += (performance.now() - sentAt) / 1000;
      let delay: number | undefined;
      if (answer === undefined || answer.status >= 500 || answer.body?.code === 'IDEMPOTENCY_IN_PROGRESS') {
        if (attempt < ATTEMPTS) delay = Math.min(BACKOFF_MAX_SECONDS, BACKOFF_BASE_SECONDS * 2 ** (attempt - 1)) * (0.5 + 0.5 * Math.random());
      } else if (answer.status === 429 && options.waitOnRateLimit && options.deadline !== undefined) {
        delay = WINDOW_SECONDS + Math.random();
      }
      if (delay === undefined || (options.deadline !== undefined && spent + delay > options.deadline)) return answer;
      if (options.abandon?.()) return answer;
      this.stats.retries++;
      spent += delay;
      await this.clock.sleep(delay);
    }
  }
}
