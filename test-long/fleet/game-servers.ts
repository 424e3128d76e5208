// The fleet test's simulated game servers and the ledger that proves what they were told.
// Each server holds its players with sessions: it joins players with a many-player acquire with
// `load`, saves all of them in one many-player batch every 3 s (an increment of `saves` and the
// save's number, with each player's session id), and lets a few leave now and then with a last
// save that releases the session, taking new players from the idle pool in their place. Every
// write carries an Idempotency-Key and is retried as documented (calls.ts). The ledger counts
// each player's acknowledged saves and those whose outcome stayed unknown, every attempt's
// outcome per player, and every session's acknowledged writes, for the checks in fleet.test.ts.
import { call, type Attempt, type CallResult } from './calls.js';

/** `contest`: an acquire of a player another server holds, which must be refused SESSION_LOCKED. */
export type OpKind = 'join' | 'save' | 'leave' | 'contest';

/** One player's part of one HTTP attempt. */
export interface PlayerOutcome {
  readonly user: string;
  readonly kind: OpKind;
  readonly sentAt: number;
  readonly at: number;
  readonly ok: boolean;
  readonly status: number;
  readonly code: string | undefined;
  /** The whole request failed (not this player alone in a 200). */
  readonly whole: boolean;
  /** The attempt's Idempotency-Key, and whether its answer was a replay. */
  readonly key: string;
  readonly replayed: boolean;
}

export interface SessionRecord {
  readonly user: string;
  readonly server: number;
  readonly sessionId: string;
  readonly acquiredAt: number;
  /** Attempts that wrote with this session and were acknowledged (not replays). */
  readonly writes: { sentAt: number; at: number }[];
  /** When its last save with `release` was sent. */
  leaveSentAt?: number;
}

interface PlayerState {
  state: 'idle' | 'joining' | 'held' | 'quarantined';
  acked: number;
  unknown: number;
}

export interface Ledger {
  readonly players: Map<string, PlayerState>;
  readonly outcomes: PlayerOutcome[];
  readonly sessions: SessionRecord[];
  /** Joins whose loaded `saves` was below the acknowledged saves (lost) or above acknowledged + unknown (applied twice). */
  readonly loadMismatches: { user: string; loaded: number; acked: number; unknown: number }[];
  /** Final refusals that no retry could fix, by code (SESSION_LOST, SESSION_LOCKED, ...). */
  readonly anomalies: Map<string, number>;
  /** Acquires of a player another server held (its session live, never released) that were granted. */
  readonly doubleHeld: { user: string; holder: number; taker: number; at: number }[];
  /** Acquires of a held player that were refused SESSION_LOCKED, as they must be. */
  contestsRefused: number;
}

export interface FleetOptions {
  readonly baseUrl: string;
  readonly apiKey: string;
  readonly servers: number;
  readonly playersPerServer: number;
  readonly saveEveryMs: number;
  /** The servers stop joining and saving at this time (epoch ms), then let everyone leave. */
  readonly until: number;
}

/** Outcomes whose write may have been applied: no answer, a 5xx other than "nothing written". */
function mayBeApplied(status: number, code: string | undefined): boolean {
  if (status === 0 || status === 502 || status === 504 || status === 500) return true;
  return code === 'OUTCOME_UNKNOWN';
}

interface PlayerAnswer {
  readonly ok: boolean;
  readonly status: number;
  readonly code: string | undefined;
  readonly entry: Record<string, any>;
}

function playerEntries(attempt: Attempt): Map<string, PlayerAnswer> {
  const out = new Map<string, PlayerAnswer>();
  const players = attempt.status === 200 ? (attempt.body?.['data']?.['players'] as Record<string, any>[] | undefined) : undefined;
  for (const entry of players ?? []) {
    out.set(String(entry['userId']), { ok: entry['success'] === true, status: entry['success'] === true ? 200 : Number(entry['status']), code: entry['code'], entry });
  }
  return out;
}

let keyCounter = 0;
const runId = Math.random().toString(36).slice(2, 8);
const newKey = (label: string) => `fleet-${runId}-${label}-${++keyCounter}`;

export function newLedger(users: readonly string[]): Ledger {
  return {
    players: new Map(users.map((u) => [u, { state: 'idle', acked: 0, unknown: 0 }])),
    outcomes: [],
    sessions: [],
    loadMismatches: [],
    anomalies: new Map(),
    doubleHeld: [],
    contestsRefused: 0,
  };
}

class GameServer {
  /** Every server, to find a player another one holds. */
  static all: GameServer[] = [];
  private readonly held = new Map<string, SessionRecord>();
  private saveNumber = 0;

  constructor(
    private readonly index: number,
    private readonly options: FleetOptions,
    private readonly ledger: Ledger,
  ) {}

  private anomaly(code: string): void {
    this.ledger.anomalies.set(code, (this.ledger.anomalies.get(code) ?? 0) + 1);
  }

  /**
   * One many-player write with the documented retries: the same request with the same key again
   * while a player failed retryably (the service writes only those, and replays the others from
   * their records). Never a new key: a player refused 429 before its turn in a retry is unwritten
   * by that attempt, yet an earlier attempt may have written it.
   */
  private async many(kind: OpKind, path: string, users: string[], body: (users: string[]) => unknown): Promise<Map<string, PlayerAnswer>> {
    const failedRetryably = (a: Attempt) =>
      !a.replayed && [...playerEntries(a).values()].some((p) => !p.ok && (p.status >= 500 || p.status === 429 || p.code === 'IDEMPOTENCY_IN_PROGRESS'));
    const key = newKey(kind);
    const result: CallResult = await call(this.options.baseUrl, this.options.apiKey, path, body(users), key, { maxAttempts: 12, deadline: Date.now() + 15_000 }, failedRetryably);
    // Per player, over every attempt: its first success is its answer; an attempt that may have
    // written it makes it unknown unless one succeeded.
    const succeeded = new Map<string, PlayerAnswer>();
    const maybeWritten = new Set<string>();
    for (const attempt of result.attempts) {
      const entries = playerEntries(attempt);
      for (const user of users) {
        const p = entries.get(user);
        const code = p?.code ?? (typeof attempt.body?.['code'] === 'string' ? attempt.body['code'] : undefined);
        const status = p?.status ?? attempt.status;
        this.ledger.outcomes.push({ user, kind, sentAt: attempt.sentAt, at: attempt.at, ok: p?.ok ?? false, status, code, whole: p === undefined, key, replayed: attempt.replayed });
        if (p?.ok && !succeeded.has(user)) succeeded.set(user, p);
        if (!p?.ok && mayBeApplied(status, code)) maybeWritten.add(user);
      }
    }
    const last = playerEntries(result.last);
    const final = new Map<string, PlayerAnswer>();
    for (const user of users) {
      const unknown: PlayerAnswer = { ok: false, status: 503, code: 'OUTCOME_UNKNOWN', entry: {} };
      const lastAnswer = last.get(user) ?? { ok: false, status: result.last.status, code: result.last.body?.['code'] as string | undefined, entry: {} };
      final.set(user, succeeded.get(user) ?? (maybeWritten.has(user) ? unknown : lastAnswer));
    }
    return final;
  }

  private pickIdle(count: number): string[] {
    const idle = [...this.ledger.players.entries()].filter(([, p]) => p.state === 'idle').map(([u]) => u);
    const picked: string[] = [];
    while (picked.length < count && idle.length > 0) picked.push(idle.splice(Math.floor(Math.random() * idle.length), 1)[0]!);
    for (const user of picked) this.ledger.players.get(user)!.state = 'joining';
    return picked;
  }

  async join(count: number): Promise<void> {
    const users = this.pickIdle(count);
    if (users.length === 0) return;
    const owner = `game-server-${this.index}`;
    const answers = await this.many('join', '/sessions/acquire', users, (players) => ({ players, owner, ttlSeconds: 60, load: true }));
    for (const user of users) {
      const state = this.ledger.players.get(user)!;
      const answer = answers.get(user)!;
      if (!answer.ok) {
        // Perhaps held (a load refused after the session was taken, an unknown outcome): never reused.
        state.state = 'quarantined';
        this.anomaly(`join ${answer.code ?? answer.status}`);
        continue;
      }
      const loaded = Number(answer.entry['values']?.['saves'] ?? 0);
      if (loaded < state.acked || loaded > state.acked + state.unknown) {
        this.ledger.loadMismatches.push({ user, loaded, acked: state.acked, unknown: state.unknown });
      }
      // What the player holds now is what counts from here (an unknown outcome is settled).
      state.unknown = loaded - state.acked;
      const session: SessionRecord = { user, server: this.index, sessionId: String(answer.entry['sessionId']), acquiredAt: Date.now(), writes: [] };
      this.ledger.sessions.push(session);
      this.held.set(user, session);
      state.state = 'held';
    }
  }

  /** A save of `users` (all held); with `release`, their last one. */
  async save(users: string[], release: boolean): Promise<void> {
    if (users.length === 0) return;
    const number = ++this.saveNumber;
    const sentAt = Date.now();
    if (release) for (const user of users) this.held.get(user)!.leaveSentAt = sentAt;
    const answers = await this.many(release ? 'leave' : 'save', '/data/batch', users, (players) => ({
      players: players.map((userId) => ({
        userId,
        sessionId: this.held.get(userId)!.sessionId,
        ops: [
          { op: 'increment', key: 'saves', amount: 1 },
          { op: 'set', key: 'last', value: { server: this.index, save: number } },
        ],
        ...(release ? { release: true } : {}),
      })),
    }));
    for (const user of users) {
      const state = this.ledger.players.get(user)!;
      const session = this.held.get(user)!;
      const answer = answers.get(user)!;
      if (answer.ok) {
        state.acked++;
        session.writes.push({ sentAt, at: Date.now() });
      } else if (mayBeApplied(answer.status, answer.code)) {
        state.unknown++;
      }
      if (!answer.ok && answer.code === 'SESSION_LOST') this.anomaly('save SESSION_LOST');
      if (release || answer.code === 'SESSION_LOST') {
        this.held.delete(user);
        state.state = answer.ok ? 'idle' : 'quarantined';
      }
    }
  }

  /**
   * Tries to acquire (without steal) a player another server holds: it must be refused
   * SESSION_LOCKED. One granted is a player held twice (a lock lost in a failover, say).
   */
  async contest(): Promise<void> {
    const others = GameServer.all.filter((s) => s !== this && s.held.size > 0);
    const holder = others[Math.floor(Math.random() * others.length)];
    // Its newest player: leaves take the oldest first, so this one is not about to leave.
    const user = holder ? [...holder.held.keys()].at(-1) : undefined;
    const session = user === undefined ? undefined : holder?.held.get(user);
    if (!holder || !user || !session) return;
    const owner = `game-server-${this.index}`;
    const answers = await this.many('contest', '/sessions/acquire', [user], (players) => ({ players, owner, ttlSeconds: 60 }));
    const answer = answers.get(user)!;
    if (answer.ok) {
      // Only a session its holder kept all along counts; a contest racing the holder's leave does not.
      if (session.leaveSentAt === undefined && holder.held.get(user) === session) {
        this.ledger.doubleHeld.push({ user, holder: holder.index, taker: this.index, at: Date.now() });
      }
      // Either way the session taken here is given back; if that fails, nobody may join the player.
      const undo = await call(this.options.baseUrl, this.options.apiKey, '/sessions/release', { userId: user, sessionId: answer.entry['sessionId'] }, newKey('undo'), {
        maxAttempts: 8,
        deadline: Date.now() + 10_000,
      });
      if (undo.last.status !== 200) this.ledger.players.get(user)!.state = 'quarantined';
    } else if (answer.code === 'SESSION_LOCKED') {
      this.ledger.contestsRefused++;
    }
  }

  async run(): Promise<void> {
    await new Promise((r) => setTimeout(r, Math.random() * this.options.saveEveryMs));
    await this.join(this.options.playersPerServer);
    let nextSave = Date.now() + this.options.saveEveryMs;
    while (nextSave < this.options.until) {
      await new Promise((r) => setTimeout(r, Math.max(0, nextSave - Date.now())));
      nextSave += this.options.saveEveryMs;
      await this.save([...this.held.keys()], false);
      if (Math.random() < 0.6) {
        const leaving = [...this.held.keys()].slice(0, 1 + Math.floor(Math.random() * 2));
        await this.save(leaving, true);
        await this.join(this.options.playersPerServer - this.held.size);
        await this.contest();
      }
    }
    await this.save([...this.held.keys()], true);
  }
}

/** Runs the servers until `options.until`, then lets every player leave. */
export async function runFleet(options: FleetOptions, ledger: Ledger): Promise<void> {
  const servers = Array.from({ length: options.servers }, (_, i) => new GameServer(i, options, ledger));
  GameServer.all = servers;
  await Promise.all(servers.map((s) => s.run()));
}
