// The request pattern of the clients' session layer, in TypeScript, for the plan simulation
// (it follows clients/luau/src/init.luau's newSessionStore on the luau-client branch):
// - join: one POST /sessions/acquire {load: true, owner: the server's id}; a 429 is waited out
//   for as long as the layer waits for a lock (stealAfter 30 s + 2 x lockRetry 5 s);
// - every auto-save interval: ONE multi-player POST /data/batch for the whole server (split
//   only past 100 players), each open player's changed keys as set ops with its sessionId
//   (which renews the lease), a fresh Idempotency-Key per request, kept for its retries; an
//   auto-save does not wait out a 429, the next one carries the same changes;
// - leave, 'fold': the player's final changes and `release: true` ride in the next auto-save;
//   leave, 'close-now' (what the Luau layer does today): one batch for that player at once,
//   waiting out 429s for up to 60 s;
// - shutdown: one multi-player batch with `release: true` for every open player, retried and
//   waiting out 429s within the 30 s the platform gives BindToClose.
import type { SimApi } from './sim-api.js';
import { SimApi as Api } from './sim-api.js';
import type { SimPlayer } from './sim-player.js';

export type LeaveMode = 'fold' | 'close-now';

const MAX_PLAYERS_PER_BATCH = 100;
const JOIN_WAIT_SECONDS = 40;
const CLOSE_SECONDS = 60;
export const SHUTDOWN_SECONDS = 30;

interface Session {
  readonly player: SimPlayer;
  readonly sessionId: string;
  leaving: boolean;
  busy: boolean;
}

interface Pending {
  readonly session: Session;
  readonly ops: Array<[string, number]>;
  readonly release: boolean;
}

export interface ServerLayer {
  join(player: SimPlayer): Promise<void>;
  /** A player who was already playing when the run began (his session opened outside it). */
  adopt(player: SimPlayer, sessionId: string, firstSaveAt: number): void;
  /** The player left (player.leftAt is set). */
  leave(player: SimPlayer): void;
  autoSave(): Promise<void>;
  shutdown(): Promise<void>;
  /** Waits for saves still under way (closes on leave). */
  settle(): Promise<void>;
}

export class SessionLayer implements ServerLayer {
  private readonly sessions = new Map<string, Session>();
  private readonly underWay = new Set<Promise<void>>();
  private shuttingDown = false;

  constructor(
    private readonly api: SimApi,
    private readonly owner: string,
    private readonly ttlSeconds: number,
    private readonly leaveMode: LeaveMode,
  ) {}

  async join(player: SimPlayer): Promise<void> {
    const answer = await this.api.send({
      method: 'POST',
      path: '/api/v1/sessions/acquire',
      body: JSON.stringify({ userId: player.userId, owner: this.owner, ttlSeconds: this.ttlSeconds, load: true }),
      idempotencyKey: Api.newIdempotencyKey(),
      waitOnRateLimit: true,
      deadline: this.api.clock.now() + JOIN_WAIT_SECONDS,
      abandon: () => this.shuttingDown,
    });
    if (this.shuttingDown) {
      // BindToClose began while the player was loading: nothing to save, give the lock back.
      player.cancel();
      if (answer?.status === 200) {
        await this.api.send({
          method: 'POST',
          path: '/api/v1/sessions/release',
          body: JSON.stringify({ userId: player.userId, sessionId: answer.body.data.sessionId }),
          idempotencyKey: Api.newIdempotencyKey(),
        });
      }
      return;
    }
    if (answer?.status !== 200) {
      player.failure = `join: ${answer?.status ?? 'no answer'} ${answer?.body?.code ?? ''}`;
      return;
    }
    this.sessions.set(player.userId, { player, sessionId: answer.body.data.sessionId, leaving: false, busy: false });
  }

  adopt(player: SimPlayer, sessionId: string): void {
    this.sessions.set(player.userId, { player, sessionId, leaving: false, busy: false });
  }

  leave(player: SimPlayer): void {
    const session = this.sessions.get(player.userId);
    if (!session) return;
    session.leaving = true;
    if (this.leaveMode === 'fold') return;
    const close = (async () => {
      while (session.busy) await this.api.clock.sleep(0.1);
      if (!this.sessions.has(player.userId)) return;
      await this.send([this.pendingOf(session, true)], true, this.api.clock.now() + CLOSE_SECONDS);
    })();
    this.track(close);
  }

  async autoSave(): Promise<void> {
    const pending = [...this.sessions.values()]
      .filter((s) => !s.busy && (this.leaveMode === 'fold' || !s.leaving))
      .map((s) => this.pendingOf(s, s.leaving));
    if (pending.length === 0) return;
    const save = this.send(pending, false, this.api.clock.now() + 60);
    this.track(save);
    await save;
  }

  async shutdown(): Promise<void> {
    const deadline = this.api.clock.now() + SHUTDOWN_SECONDS;
    this.shuttingDown = true;
    await this.settle();
    const pending = [...this.sessions.values()].map((s) => this.pendingOf(s, true));
    if (pending.length > 0) await this.send(pending, true, deadline);
    for (const session of this.sessions.values()) {
      session.player.failure ??= 'shutdown: not saved within the deadline';
    }
  }

  async settle(): Promise<void> {
    while (this.underWay.size > 0) await Promise.all([...this.underWay]);
  }

  private track(work: Promise<void>): void {
    this.underWay.add(work);
    void work.finally(() => this.underWay.delete(work));
  }

  private pendingOf(session: Session, release: boolean): Pending {
    session.player.advance(this.api.clock.now());
    return { session, ops: session.player.changed(), release };
  }

  /** Sends entries in multi-player batches of at most 100; settles every entry. */
  private async send(pending: Pending[], waitOnRateLimit: boolean, deadline: number): Promise<void> {
    for (const p of pending) p.session.busy = true;
    try {
      const chunks: Pending[][] = [];
      for (let i = 0; i < pending.length; i += MAX_PLAYERS_PER_BATCH) chunks.push(pending.slice(i, i + MAX_PLAYERS_PER_BATCH));
      await Promise.all(chunks.map((chunk) => this.sendChunk(chunk, waitOnRateLimit, deadline)));
    } finally {
      for (const p of pending) p.session.busy = false;
    }
  }

  private async sendChunk(chunk: Pending[], waitOnRateLimit: boolean, deadline: number): Promise<void> {
    const players = chunk.map((p) => ({
      userId: p.session.player.userId,
      sessionId: p.session.sessionId,
      ops: p.ops.map(([key, value]) => ({ op: 'set', key, value })),
      ...(p.release ? { release: true } : {}),
    }));
    const answer = await this.api.send({
      method: 'POST',
      path: '/api/v1/data/batch',
      body: JSON.stringify({ players }),
      idempotencyKey: Api.newIdempotencyKey(),
      waitOnRateLimit,
      deadline,
    });
    if (answer?.status !== 200) return; // kept: the next save carries the same changes
    const outcomes = new Map<string, any>((answer.body.data.players as any[]).map((o) => [String(o.userId), o]));
    for (const p of chunk) {
      const outcome = outcomes.get(p.session.player.userId);
      if (outcome?.success === true) {
        p.session.player.acknowledge(p.ops);
        if (p.release) this.sessions.delete(p.session.player.userId);
      } else {
        p.session.player.failure = `save: ${outcome?.status} ${outcome?.code}`;
        if (outcome?.code === 'SESSION_LOST' || outcome?.code === 'SESSION_LOCKED') this.sessions.delete(p.session.player.userId);
      }
    }
  }
}
