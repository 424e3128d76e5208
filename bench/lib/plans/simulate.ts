// One run of the plan simulation: `players` concurrent players on game servers of 30, against
// one fresh workspace of the given plan on the real service. Each server slot hosts 15-minute
// sessions back to back, so joins and leaves are spread evenly; the game runs `steadyMinutes`
// at full population, then every server shuts down at the same moment. Afterwards the stored
// data of every player is compared with what the simulation wrote, and every session must be
// released.
//
// Warm start (the default): the servers are already full when the run begins. The first
// player of each slot joined before it (his session is opened straight in Redis, through the
// service's own script, outside the plan's budget), has made no change yet, and leaves at a
// time spread evenly over the first 15 minutes, his slot's next player joining at once. So the
// run is at full population and at the steady join rate from its first second. Cold start
// (warmStart false): the first joins are spread over the first 15 minutes instead (the join
// rate is already the steady one) and the population reaches `players` at minute 15.
import type { Redis } from 'ioredis';
import { randomBytes } from 'node:crypto';
import { keys } from '../../../src/store/keys.js';
import { loadConfig } from '../../../src/config.js';
import { PlayerDataStore, playerLimitsOf } from '../../../src/store/players/player-data.js';
import { KeyByKeyLayer } from './key-by-key-layer.js';
import { FOLD, SessionLayer, SHIPPED, type LayerOptions, type ServerLayer } from './session-layer.js';
import { SimApi, SimClock, SimStats, WINDOW_SECONDS } from './sim-api.js';
import { SimPlayer } from './sim-player.js';
import { seededRandom } from '../seeded-random.js';

export type Pattern = 'session' | 'session-close-now' | 'key-by-key';

export interface SimOptions {
  readonly players: number;
  readonly pattern: Pattern;
  readonly baseUrl: string;
  readonly apiKey: string;
  readonly workspaceId: string;
  readonly redis: Redis;
  readonly speedup: number;
  readonly steadyMinutes: number;
  readonly sessionMinutes?: number;
  readonly serverSize?: number;
  readonly autoSaveSeconds?: number;
  readonly changesPerMinute?: number;
  /** Real seconds (the service takes 30-3600); the auto-saves renew it. */
  readonly ttlSeconds?: number;
  readonly seed?: number;
  readonly warmStart?: boolean;
  /**
   * The service's window (real ms): when given, the shutdown is moved (by less than a window)
   * to fall when 40% of a window is left, so that the window already holds 60% of a window's
   * steady traffic. A game cannot choose when its servers close; this is the unlucky case,
   * and it makes the verdict at a given count repeat from run to run.
   */
  readonly windowMs?: number;
  /** The plan's requests per window: no 10 simulated seconds may carry more (see peakWindowRequests). */
  readonly budget: number;
  /** Changes to the shipped layer's options, for `session-close-now` (to measure what each part buys). */
  readonly shipped?: Partial<LayerOptions>;
}

export interface SimResult {
  readonly players: number;
  readonly pattern: Pattern;
  readonly servers: number;
  readonly playersSimulated: number;
  readonly requests: number;
  readonly requestsByEndpoint: Record<string, number>;
  readonly statuses: Record<string, number>;
  readonly rateLimited: number;
  /** The most requests sent within any 10 simulated seconds (shutdown included): SimStats.peakSlidingWindow. */
  readonly peakWindowRequests: number;
  /** The plan's requests per window. */
  readonly budget: number;
  /** The most requests sent in one window before the shutdown (steady state). */
  readonly peakSteadyWindowRequests: number;
  /** Requests the shutdown sent (every server's final saves, retries included). */
  readonly shutdownRequests: number;
  /** Requests per player per simulated minute at full population, before the shutdown. */
  readonly requestsPerPlayerMinute: number;
  /** Players whose stored data differs from what the game wrote. */
  readonly lostSaves: number;
  /** Players whose session the layer could not open (they never played). */
  readonly failedJoins: number;
  readonly unreleasedSessions: number;
  /** Joins under way when the servers shut down (not failures: those players never played). */
  readonly cancelledJoins: number;
  readonly networkErrors: number;
  readonly retries: number;
  readonly unexpected: SimStats['unexpected'];
  readonly failures: string[];
  readonly realSeconds: number;
  readonly ok: boolean;
}

/** The limits the service runs with by default (its config, as the bench starts it). */
function serviceLimits() {
  return playerLimitsOf(loadConfig({ NODE_ENV: 'production', REDIS_URL: 'redis://127.0.0.1:1' }));
}


export async function simulate(o: SimOptions): Promise<SimResult> {
  const started = performance.now();
  const sessionSeconds = (o.sessionMinutes ?? 15) * 60;
  const serverSize = o.serverSize ?? 30;
  const autoSave = o.autoSaveSeconds ?? 60;
  const secondsPerChange = 60 / (o.changesPerMinute ?? 8);
  const warm = o.warmStart ?? true;
  const rampSeconds = warm ? 0 : sessionSeconds;
  let end = rampSeconds + o.steadyMinutes * 60;
  const rand = seededRandom(o.seed ?? 1);
  const ttlSeconds = o.ttlSeconds ?? 30;
  const firstPlayers = warm ? await openFirstSessions(o, serverSize, ttlSeconds, secondsPerChange, rand) : [];
  const clock = new SimClock(o.speedup);
  const stats = new SimStats();
  const api = new SimApi(o.baseUrl, o.apiKey, clock, stats);
  const servers = Math.ceil(o.players / serverSize);
  const all: SimPlayer[] = [];

  const layers: ServerLayer[] = Array.from({ length: servers }, (_, s) => {
    if (o.pattern === 'key-by-key') return new KeyByKeyLayer(api);
    const options = o.pattern === 'session' ? { ...FOLD, autoSaveSeconds: autoSave } : { ...SHIPPED, autoSaveSeconds: autoSave, ...o.shipped };
    return new SessionLayer(api, `job-${s}`, ttlSeconds, options);
  });

  // The end moves (unluckyEnd) once traffic runs, so waits end at the shutdown, not at `end`.
  let shuttingDown = false;
  let startShutdown = () => {};
  const shutdownStarted = new Promise<void>((resolve) => (startShutdown = resolve));
  const untilOrShutdown = (at: number) => Promise.race([clock.until(at), shutdownStarted]);

  const slot = async (server: number, index: number, firstJoin: number) => {
    const first = firstPlayers[server * serverSize + index];
    if (first) {
      all.push(first.player);
      layers[server]!.adopt(first.player, first.sessionId, rand() * 60);
      await untilOrShutdown(first.leaveAt);
      if (shuttingDown) return; // plays on until the shutdown
      first.player.leftAt = first.leaveAt;
      layers[server]!.leave(first.player);
    } else {
      await untilOrShutdown(firstJoin);
    }
    for (let generation = first ? 1 : 0; !shuttingDown; generation++) {
      const joinedAt = clock.now();
      const player = new SimPlayer(`s${server}-${index}-${generation}`, joinedAt, secondsPerChange, Math.floor(rand() * 20));
      all.push(player);
      await layers[server]!.join(player);
      if (player.failure || player.cancelled) return;
      const leaveAt = joinedAt + sessionSeconds;
      await untilOrShutdown(leaveAt);
      if (shuttingDown) return; // plays on until the shutdown
      player.leftAt = leaveAt;
      layers[server]!.leave(player);
    }
  };
  const autoSaves = async (server: number, phase: number) => {
    const layer = layers[server]!;
    // A layer whose closes carry the auto-save keeps its own next time (SessionStore._autoSaveLoop).
    const moving = layer.nextAutoSave !== undefined;
    if (moving) layer.nextAutoSave = phase;
    for (let at = phase; ; ) {
      await untilOrShutdown(at);
      if (shuttingDown) return;
      if (moving && layer.nextAutoSave! > at) {
        at = layer.nextAutoSave!; // a close carried it meanwhile
        continue;
      }
      at += autoSave;
      if (moving) layer.nextAutoSave = at;
      void layer.autoSave();
    }
  };

  const slots: Array<Promise<void>> = [];
  for (let i = 0; i < o.players; i++) {
    slots.push(slot(Math.floor(i / serverSize), i % serverSize, (i / o.players) * sessionSeconds * 0.999 + rand() * 0.001));
  }
  const saving = layers.map((_, s) => autoSaves(s, rand() * autoSave));
  await clock.until(end - 3 * WINDOW_SECONDS);
  if (o.windowMs !== undefined) end = await unluckyEnd(o, clock, end, o.windowMs);
  await clock.until(end);
  shuttingDown = true;
  startShutdown();
  for (const player of all) player.leftAt ??= end;
  const shutdownWindow = Math.floor(clock.now() / WINDOW_SECONDS);
  const beforeShutdown = stats.requests;
  await Promise.all(layers.map((layer) => layer.shutdown()));
  const shutdownRequests = stats.requests - beforeShutdown;
  await Promise.all([...slots, ...saving]);
  await Promise.all(layers.map((layer) => layer.settle()));

  if (process.env['BENCH_PLANS_DEBUG']) {
    const bySecond = new Map<number, number>();
    for (const t of stats.sentAt) if (t > end - 20) bySecond.set(Math.floor(t), (bySecond.get(Math.floor(t)) ?? 0) + 1);
    process.stderr.write(`end ${end.toFixed(2)}; sent by second near it: ${JSON.stringify([...bySecond].sort((a, b) => a[0] - b[0]))}\n`);
    const limited = new Map<number, number>();
    for (const t of stats.rateLimitedAt) limited.set(Math.floor(t), (limited.get(Math.floor(t)) ?? 0) + 1);
    process.stderr.write(`429s by second: ${JSON.stringify([...limited].sort((a, b) => a[0] - b[0]))}\n`);
  }
  const verified = await verify(o, all);
  const steady = stats.perWindow.slice(0, shutdownWindow);
  // Full population from the end of the ramp; the shutdown's own window is left out.
  const full = stats.perWindow.slice(Math.ceil(rampSeconds / WINDOW_SECONDS), shutdownWindow);
  const result = {
    players: o.players,
    pattern: o.pattern,
    servers,
    playersSimulated: all.length,
    requests: stats.requests,
    requestsByEndpoint: stats.byEndpoint,
    statuses: stats.byStatus,
    rateLimited: stats.rateLimited,
    peakWindowRequests: stats.peakSlidingWindow(),
    budget: o.budget,
    peakSteadyWindowRequests: Math.max(0, ...steady),
    shutdownRequests,
    requestsPerPlayerMinute:
      full.length > 0 ? Math.round((full.reduce((a, b) => a + b, 0) / full.length / o.players) * (60 / WINDOW_SECONDS) * 1000) / 1000 : NaN,
    lostSaves: verified.lost,
    failedJoins: all.filter((p) => !p.cancelled && p.failure?.startsWith('join')).length,
    cancelledJoins: all.filter((p) => p.cancelled).length,
    unreleasedSessions: verified.unreleased,
    networkErrors: stats.networkErrors,
    retries: stats.retries,
    unexpected: stats.unexpected,
    failures: [...new Set(all.map((p) => p.failure).filter((f): f is string => f !== undefined))].slice(0, 10),
    realSeconds: Math.round((performance.now() - started) / 100) / 10,
  };
  return {
    ...result,
    ok:
      result.rateLimited === 0 &&
      result.peakWindowRequests <= o.budget &&
      result.lostSaves === 0 && result.failedJoins === 0 && result.unreleasedSessions === 0,
  };
}

/** The first simulated time at or after `end` when 40% of the plan's window is left. */
async function unluckyEnd(o: SimOptions, clock: SimClock, end: number, windowMs: number): Promise<number> {
  const ttl = await o.redis.pttl(keys.rateLimit(o.workspaceId));
  if (ttl <= 0) return end;
  const now = clock.now();
  let at = now + ((ttl - 0.4 * windowMs) * clock.speedup) / 1000;
  const step = (windowMs * clock.speedup) / 1000;
  while (at < end) at += step;
  return at;
}

/**
 * The first player of every slot, already playing: sessions acquired straight in Redis with the
 * service's script (as POST /sessions/acquire does, minus the plan), leaves spread evenly over
 * the first session length.
 */
async function openFirstSessions(
  o: SimOptions,
  serverSize: number,
  ttlSeconds: number,
  secondsPerChange: number,
  rand: () => number,
): Promise<Array<{ player: SimPlayer; sessionId: string; leaveAt: number }>> {
  // The service's own limits (the store needs every one since restore points came).
  const store = new PlayerDataStore(o.redis, { ...serviceLimits(), idempotencyTtlSeconds: 60 });
  const sessionSeconds = (o.sessionMinutes ?? 15) * 60;
  const first = Array.from({ length: o.players }, (_, i) => {
    const userId = `s${Math.floor(i / serverSize)}-${i % serverSize}-0`;
    return {
      player: new SimPlayer(userId, 0, secondsPerChange, Math.floor(rand() * 20)),
      sessionId: `ses_${randomBytes(16).toString('base64url')}`,
      leaveAt: ((i + rand()) / o.players) * sessionSeconds,
    };
  });
  // Shuffled, so a server's players do not all leave in the same stretch of time.
  for (let i = first.length - 1; i > 0; i--) {
    const j = Math.floor(rand() * (i + 1));
    [first[i]!.leaveAt, first[j]!.leaveAt] = [first[j]!.leaveAt, first[i]!.leaveAt];
  }
  if (o.pattern === 'key-by-key') return first;
  for (let i = 0; i < first.length; i += 500) {
    await Promise.all(
      first.slice(i, i + 500).map(async (f, j) => {
        const reply = await store.session(o.workspaceId, f.player.userId, {
          action: 'acquire',
          sessionId: f.sessionId,
          owner: `job-${Math.floor((i + j) / serverSize)}`,
          ttlMs: ttlSeconds * 1000,
          steal: false,
        });
        if (!reply.reply.applied) throw new Error(`opening the first session of ${f.player.userId}: ${JSON.stringify(reply)}`);
      }),
    );
  }
  return first;
}

/** Reads every player straight from Redis (through the service's store, outside any plan). */
async function verify(o: SimOptions, players: readonly SimPlayer[]): Promise<{ lost: number; unreleased: number }> {
  const store = new PlayerDataStore(o.redis, serviceLimits());
  let lost = 0;
  let unreleased = 0;
  for (let i = 0; i < players.length; i += 200) {
    const batch = players.slice(i, i + 200);
    await Promise.all(
      batch.map(async (player) => {
        if (player.cancelled || player.failure?.startsWith('join')) return;
        const all = await store.readAll(o.workspaceId, player.userId, 1 << 30);
        const stored = new Map(all.complete ? all.entries.map(([key, entry]) => [key, Number(entry.valueJson)]) : []);
        player.advance(Infinity);
        const same = stored.size === player.values.size && [...player.values].every(([k, v]) => stored.get(k) === v);
        if (!same) {
          lost++;
          if (process.env['BENCH_PLANS_DEBUG'] && lost <= 3) {
            process.stderr.write(`lost ${player.userId} joined ${player.joinedAt} left ${player.leftAt}: wrote ${JSON.stringify([...player.values])} saved ${JSON.stringify([...player.saved])} stored ${JSON.stringify([...stored])}\n`);
          }
        }
        if (o.pattern !== 'key-by-key' && (await store.sessionOf(o.workspaceId, player.userId)).session) unreleased++;
      }),
    );
  }
  return { lost, unreleased };
}
