// Redis failures that a failover or a restart brings, logged so an operator can act on them.
//
// One master failing over made each instance log 5-12 lines at `error`, each with ioredis's raw
// message and stack (issue 40), for what needs no one: the replica takes over in a few seconds
// and clients retry their 503s. Here every such failure is sorted into a kind once
// (`redisFailureKind`), counted (pds_redis_failover_events_total{kind}) and logged at `warn`, at
// most one line per kind a second per logger (the line says how many of that kind it stands for
// since the last). `error` is kept for what needs a person: failures that go on longer than any
// failover (ESCALATE_AFTER_MS without a quiet QUIET_MS) are logged at `error` once a minute.
import type { Logger } from '../../logger.js';
import { metrics } from '../../metrics.js';
import { isUnavailableError } from './redis.js';

export const FAILOVER_KINDS = ['moved', 'ask', 'clusterdown', 'tryagain', 'redirections', 'connection', 'timeout', 'unavailable'] as const;
export type FailoverKind = (typeof FAILOVER_KINDS)[number];

/** Lines of one kind: at most one per this many ms. */
const LINE_EVERY_MS = 1000;
/** Failures this long apart end a streak. */
const QUIET_MS = 5000;
/** A streak this long is no failover (they take cluster-node-timeout plus a few seconds). */
const ESCALATE_AFTER_MS = 30_000;
/** While a streak lasts, its `error` line comes again this often. */
const ESCALATE_EVERY_MS = 60_000;

/**
 * The kind of a Redis failure that Redis being unavailable explains (a failover, a restart, a
 * lost connection); undefined for anything else, which is a bug or a refusal to log as such.
 */
export function redisFailureKind(err: unknown): FailoverKind | undefined {
  if (!isUnavailableError(err)) return undefined;
  const message = (err as Error).message;
  // ioredis's "Too many Cluster redirections. Last error: ..." names the last error after it.
  if (/^Too many Cluster redirections/.test(message)) return 'redirections';
  const reply = /^(MOVED|ASK|CLUSTERDOWN|TRYAGAIN)\b/.exec(message);
  if (reply) return reply[1]!.toLowerCase() as FailoverKind;
  if (/Command timed out/.test(message)) return 'timeout';
  if (
    (err as Error).name === 'MaxRetriesPerRequestError' ||
    /Connection is closed|ECONNREFUSED|ECONNRESET|ETIMEDOUT|EPIPE|Stream isn't writeable|enableOfflineQueue|None of startup nodes|Cluster isn't ready|Failed to refresh slots cache/i.test(message)
  ) {
    return 'connection';
  }
  return 'unavailable';
}

interface KindState {
  lastLineAt: number;
  /** Events of the kind since its last line that were not logged one by one. */
  suppressed: number;
  lastMessage: string;
  timer: NodeJS.Timeout | undefined;
}

export class FailoverLog {
  private readonly kinds = new Map<FailoverKind, KindState>();
  private streakStart = 0;
  private lastEventAt = -Infinity;
  private lastEscalation = -Infinity;

  constructor(
    private readonly logger: Logger,
    private readonly clock: () => number = Date.now,
  ) {}

  /**
   * Counts and logs `err` when it is a Redis failure of a failover or a restart, and says so;
   * false for any other error, which the caller logs as it did. `context` goes into the line
   * (a request id, the connection's name), `what` says what the failure did.
   */
  note(err: unknown, context: Record<string, unknown>, what: string): boolean {
    const kind = redisFailureKind(err);
    if (kind === undefined) return false;
    this.record(kind, err, context, what);
    return true;
  }

  /** Counts and logs a failure already known to be of `kind`. */
  record(kind: FailoverKind, err: unknown, context: Record<string, unknown>, what: string): void {
    metrics.redisFailoverEvents.inc({ kind });
    const now = this.clock();
    this.escalate(now);
    let state = this.kinds.get(kind);
    if (state === undefined) this.kinds.set(kind, (state = { lastLineAt: -Infinity, suppressed: 0, lastMessage: '', timer: undefined }));
    const message = err instanceof Error ? err.message : String(err ?? '');
    state.lastMessage = message;
    if (now - state.lastLineAt >= LINE_EVERY_MS) {
      this.line(kind, state, now, { ...context, err: message }, what);
      return;
    }
    state.suppressed++;
    this.tellLater(kind, state, now);
  }

  /** The events held back are told once the kind's second is over, if no line of it came first. */
  private tellLater(kind: FailoverKind, state: KindState, now: number): void {
    state.timer ??= setTimeout(() => {
      state.timer = undefined;
      if (state.suppressed === 0) return;
      const at = this.clock();
      if (at - state.lastLineAt >= LINE_EVERY_MS) this.line(kind, state, at, { err: state.lastMessage }, 'more of the same');
      else this.tellLater(kind, state, at);
    }, Math.max(1, state.lastLineAt + LINE_EVERY_MS - now)).unref();
  }

  private line(kind: FailoverKind, state: KindState, now: number, fields: Record<string, unknown>, what: string): void {
    this.logger.warn({ kind, suppressed: state.suppressed, ...fields }, `redis ${kind} (failover or restart): ${what}`);
    state.lastLineAt = now;
    state.suppressed = 0;
  }

  private escalate(now: number): void {
    if (now - this.lastEventAt > QUIET_MS) this.streakStart = now;
    this.lastEventAt = now;
    const lasting = now - this.streakStart;
    if (lasting < ESCALATE_AFTER_MS || now - this.lastEscalation < ESCALATE_EVERY_MS) return;
    this.lastEscalation = now;
    this.logger.error(
      { failingForMs: lasting },
      'Redis has been failing for longer than a failover takes: a master down with no replica to take over, or Redis down (see /readyz and pds_redis_failover_events_total)',
    );
  }
}

const logs = new WeakMap<Logger, FailoverLog>();

/** The failover log of `logger`: one per logger, so each running service (and test) has its own budget of lines. */
export function failoverLogOf(logger: Logger): FailoverLog {
  let log = logs.get(logger);
  if (log === undefined) logs.set(logger, (log = new FailoverLog(logger)));
  return log;
}
