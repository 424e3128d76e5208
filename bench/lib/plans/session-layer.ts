// The request pattern of the clients' session layer, in TypeScript, for the plan simulation
// (it follows clients/luau/src/init.luau's newSessionStore; the 'close-now' pattern with the
// default ShippedOptions is the layer as shipped, issue 29's "joins that arrive together"):
// - join: POST /sessions/acquire {load: true, owner: the server's id}; a 429 is waited out
//   for as long as the layer waits for a lock (stealAfter 30 s + 2 x lockRetry 5 s). With
//   joinBatchSeconds > 0 (the shipped layer: 0.25 s), the first join after a quiet spell opens
//   a window, and every join of the server within it goes in one multi-player acquire
//   ({players: [...]}, at most 100; a window of one sends the one-player form), as
//   SessionStore._join does; a window that ends after the shutdown began sends nothing;
// - every auto-save interval: ONE multi-player POST /data/batch for the whole server (split
//   only past 100 players), each open player's changed keys as set ops with its sessionId
//   (which renews the lease), a fresh Idempotency-Key per request, kept for its retries; an
//   auto-save does not wait out a 429, the next one carries the same changes;
// - leave, 'fold': the player's final changes and `release: true` ride in the next auto-save;
//   leave, 'close-now': one batch for that player at once, waiting out 429s for up to 60 s;
//   with carryOnClose (the shipped layer, SessionStore._sendClose), when the server's next
//   auto-save is due within half its interval, the same batch carries what it would send
//   (every other open session's changes, its lease renewed), and the next auto-save comes
//   autoSaveSeconds after the close;
// - shutdown: one multi-player batch with `release: true` for every open player, retried and
//   waiting out 429s within shutdownSeconds (30 s, the platform's BindToClose limit; the shipped
//   layer's 25 s); with shutdownSpreadSeconds > 0 (the shipped layer: 10 s) the server first
//   waits a random part of it (SessionStore._spreadShutdown), the deadline still counted from
//   the shutdown.
import type { SimApi } from './sim-api.js';
import { SimApi as Api } from './sim-api.js';
import type { SimPlayer } from './sim-player.js';

export type LeaveMode = 'fold' | 'close-now';

const MAX_PLAYERS_PER_BATCH = 100;
const JOIN_WAIT_SECONDS = 40;
const CLOSE_SECONDS = 60;
export const SHUTDOWN_SECONDS = 30;

export interface LayerOptions {
  readonly leaveMode: LeaveMode;
  /** Joins within this window share one acquire (0: each join alone, at once). */
  readonly joinBatchSeconds: number;
  /** A close carries the others' auto-save when it is due within half its interval, and moves it on (close-now only). */
  readonly carryOnClose: boolean;
  /** The shutdown's save waits a random part of this first. */
  readonly shutdownSpreadSeconds: number;
  /** How long the shutdown's save keeps trying, from the shutdown. */
  readonly shutdownSeconds: number;
  readonly autoSaveSeconds: number;
}

/** The Luau layer as shipped (newSessionStore's defaults). */
export const SHIPPED: LayerOptions = {
  leaveMode: 'close-now',
  joinBatchSeconds: 0.25,
  carryOnClose: true,
  shutdownSpreadSeconds: 10,
  shutdownSeconds: 25,
  autoSaveSeconds: 60,
};

/** Issue 16's brief: the leave folded into the next auto-save, nothing batched or spread. */
export const FOLD: LayerOptions = {
  leaveMode: 'fold',
  joinBatchSeconds: 0,
  carryOnClose: false,
  shutdownSpreadSeconds: 0,
  shutdownSeconds: SHUTDOWN_SECONDS,
  autoSaveSeconds: 60,
};

interface Join {
  readonly player: SimPlayer;
  readonly deadline: number;
  readonly done: () => void;
}

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
  /**
   * When the next auto-save is due, for a layer whose closes move it (simulate.ts sets the
   * first one and reads it); undefined: a fixed schedule.
   */
  nextAutoSave?: number;
}

export class SessionLayer implements ServerLayer {
  private readonly sessions = new Map<string, Session>();
  private readonly underWay = new Set<Promise<void>>();
  private shuttingDown = false;
  private joins: Join[] = [];
  private readonly leaveMode: LeaveMode;
  nextAutoSave: number | undefined;

  constructor(
    private readonly api: SimApi,
    private readonly owner: string,
    private readonly ttlSeconds: number,
    private readonly options: LayerOptions,
  ) {
    this.leaveMode = options.leaveMode;
    this.nextAutoSave = options.carryOnClose && options.leaveMode === 'close-now' ? 0 : undefined;
  }

  join(player: SimPlayer): Promise<void> {
    if (this.options.joinBatchSeconds <= 0) return this.joinAlone(player);
    return new Promise((done) => {
      this.joins.push({ player, deadline: this.api.clock.now() + JOIN_WAIT_SECONDS, done });
      if (this.joins.length === 1) void this.api.clock.sleep(this.options.joinBatchSeconds).then(() => this.sendJoins());
    });
  }

  /** The end of a join window (SessionStore._sendJoins, _acquireJoins). */
  private async sendJoins(): Promise<void> {
    const queued = this.joins;
    this.joins = [];
    if (this.shuttingDown) {
      for (const j of queued) {
        j.player.cancel();
        j.done();
      }
      return;
    }
    const chunks: Join[][] = [];
    for (let i = 0; i < queued.length; i += MAX_PLAYERS_PER_BATCH) chunks.push(queued.slice(i, i + MAX_PLAYERS_PER_BATCH));
    await Promise.all(
      chunks.map(async (chunk) => {
        try {
          if (chunk.length === 1) await this.joinAlone(chunk[0]!.player, chunk[0]!.deadline);
          else await this.joinTogether(chunk);
        } finally {
          for (const j of chunk) j.done();
        }
      }),
    );
  }

  private async joinTogether(chunk: Join[]): Promise<void> {
    const answer = await this.api.send({
      method: 'POST',
      path: '/api/v1/sessions/acquire',
      body: JSON.stringify({ players: chunk.map((j) => j.player.userId), owner: this.owner, ttlSeconds: this.ttlSeconds, load: true }),
      idempotencyKey: Api.newIdempotencyKey(),
      waitOnRateLimit: true,
      deadline: Math.max(...chunk.map((j) => j.deadline)),
      abandon: () => this.shuttingDown,
    });
    const outcomes = new Map<string, any>(
      answer?.status === 200 ? (answer.body.data.players as any[]).map((o) => [String(o.userId), o]) : [],
    );
    await Promise.all(
      chunk.map((j) => {
        const outcome = outcomes.get(j.player.userId);
        return this.joined(
          j.player,
          outcome?.success === true ? outcome.sessionId : undefined,
          `join: ${outcome?.status ?? answer?.status ?? 'no answer'} ${outcome?.code ?? answer?.body?.code ?? ''}`,
        );
      }),
    );
  }

  private async joinAlone(player: SimPlayer, deadline = this.api.clock.now() + JOIN_WAIT_SECONDS): Promise<void> {
    const answer = await this.api.send({
      method: 'POST',
      path: '/api/v1/sessions/acquire',
      body: JSON.stringify({ userId: player.userId, owner: this.owner, ttlSeconds: this.ttlSeconds, load: true }),
      idempotencyKey: Api.newIdempotencyKey(),
      waitOnRateLimit: true,
      deadline,
      abandon: () => this.shuttingDown,
    });
    await this.joined(
      player,
      answer?.status === 200 ? answer.body.data.sessionId : undefined,
      `join: ${answer?.status ?? 'no answer'} ${answer?.body?.code ?? ''}`,
    );
  }

  /** One player's acquire answered: a session, or the failure (as SessionStore.open goes on). */
  private async joined(player: SimPlayer, sessionId: string | undefined, failure: string): Promise<void> {
    if (this.shuttingDown) {
      // BindToClose began while the player was loading: nothing to save, give the lock back.
      player.cancel();
      if (sessionId !== undefined) {
        await this.api.send({
          method: 'POST',
          path: '/api/v1/sessions/release',
          body: JSON.stringify({ userId: player.userId, sessionId }),
          idempotencyKey: Api.newIdempotencyKey(),
        });
      }
      return;
    }
    if (sessionId === undefined) {
      player.failure = failure;
      return;
    }
    this.sessions.set(player.userId, { player, sessionId, leaving: false, busy: false });
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
      const pending = [this.pendingOf(session, true)];
      if (this.options.carryOnClose && this.nextAutoSave! - this.api.clock.now() <= this.options.autoSaveSeconds / 2) {
        // SessionStore._sendClose: the auto-save due within half its interval goes with the release.
        for (const s of this.sessions.values()) {
          if (s !== session && !s.busy && !s.leaving) pending.push(this.pendingOf(s, false));
        }
        if (pending.length > 1) this.nextAutoSave = this.api.clock.now() + this.options.autoSaveSeconds;
      }
      await this.send(pending, true, this.api.clock.now() + CLOSE_SECONDS);
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
    const deadline = this.api.clock.now() + this.options.shutdownSeconds;
    this.shuttingDown = true;
    await this.settle();
    if (this.options.shutdownSpreadSeconds > 0 && this.sessions.size > 0) {
      // SessionStore._spreadShutdown: the data is taken after the wait.
      await this.api.clock.sleep(Math.random() * this.options.shutdownSpreadSeconds);
    }
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
