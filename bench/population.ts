// `npm run bench:population`: what a game's players cost in Redis memory after 60 days, on
// simulated time (docs/history.md, "Memory per player over a population"). 100,000 players arrive
// over the 60 days; each plays on a number of days drawn from a heavy-tailed (Zipf, exponent 2)
// law, so most play once and a few every day; a session (one per day played, mean 30 minutes,
// exponential) saves 20 keys of 100 B every minute. Values are random base64, which LZF cannot
// shrink: real game data compresses better, so the history figures are an upper bound.
//
// Simulated time drives the service's own write path below HTTP (saves/player-writes.ts: the
// quota's verdict, the workspace's write turn, lua/write-player.lua with its restore points, the
// storage totals and the players lists), the history sweep (saves/history-sweep.ts, its rounds
// run with the simulated clock) and every setting at its default (HISTORY_INTERVAL_SECONDS 300,
// HISTORY_FINE_HOURS 24, HISTORY_HOURLY_HOURS 168, HISTORY_MAX_AGE_HOURS 720). Each part takes "now" from its caller, so
// the simulated clock is the only change. Two shortcuts, both in docs/history.md:
//   - a session's saves that repeat within a restore interval are sent once, at the interval's
//     first minute (`--every-minute` sends them all): a repeat records nothing in the history and
//     rewrites values of the same size, so the memory at the end is the same;
//   - the sweep runs once every `--sweep-minutes` (360) of simulated time instead of every
//     30 s, and at day 60 its rolling walk (200 players a round) is run to its end once before
//     anything is measured. What the sweep drops (points past retention) and thins (points past
//     a day or a week, to one an hour or a day) does not depend on when it runs, so the state measured is the real sweep's once its walk has passed every player
//     (within hours of any moment with 100,000 players); only the memory between rounds is
//     higher. The sample reports any point still past retention.
//
// At day 60: used_memory per player, by group (players last written within the last day, within
// the last 30 days, and earlier), each the used_memory drop when the group's players leave
// (their keys and their entries in the players and history lists), against the same data (20
// fields of 100 B) in a bare HSET under the same key names; and, for a sample of each group,
// MEMORY USAGE of the hash, the restore points' lists and index (with the open point's keys),
// and the hash's history fields (the open point, the byte count, and a mark per key where the
// release before left one).
// Writes bench/results/population.json (bench/capacity.ts reads it).
//   npm run bench:population                     # 100,000 players, 60 days (about 22 minutes on 2 cores)
//   npm run bench:population -- --players 5000   # a quick run
import { mkdirSync, writeFileSync } from 'node:fs';
import { randomBytes } from 'node:crypto';
import { cpus, loadavg } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Command, InvalidArgumentError } from 'commander';
import { Redis } from 'ioredis';
import pMap from 'p-map';
import { loadConfig } from '../src/config.js';
import { AppError, ErrorCode } from '../src/errors.js';
import { IdempotencyClaims } from '../src/saves/idempotency.js';
import { HistorySweep } from '../src/saves/history-sweep.js';
import { PlayerWrites, type WriteOrigin } from '../src/saves/player-writes.js';
import { StorageQuota } from '../src/saves/storage-quota.js';
import { keys } from '../src/store/keys.js';
import { PlayerDataStore, playerLimitsOf } from '../src/store/players/player-data.js';
import type { Op } from '../src/store/players/script-protocol.js';
import { PlayerIndexRecorder } from '../src/store/workspaces/player-index.js';
import { HistoryList, START as LIST_START } from '../src/store/workspaces/history-list.js';
import { StorageUsage } from '../src/store/workspaces/storage-usage.js';
import { WorkspaceStore } from '../src/store/workspaces/workspaces.js';
import { runMain, startBenchRedis } from './lib/bench-redis.js';
import { usedMemory } from './lib/redis-stats.js';
import { seededRandom } from './lib/seeded-random.js';

const MINUTE = 60_000;
const DAY = 1440 * MINUTE;
const KEYS = 20;
const VALUE_BYTES = 100;
/** How long a save waits for its instance's write turn. */
const TURN_WAIT_MS = 60_000;
/** The simulation's first day, a UTC midnight (fixed, so that two runs of one seed are alike). */
const START = Date.UTC(2026, 0, 1);

const whole = (raw: string) => {
  const n = Number(raw);
  if (!Number.isInteger(n) || n <= 0) throw new InvalidArgumentError('must be a positive whole number');
  return n;
};
const opts = new Command()
  .name('npm run bench:population --')
  .description('Redis memory per player after days of a simulated population (docs/history.md).')
  .option('--players <n>', 'players', whole, 100_000)
  .option('--days <n>', 'days simulated', whole, 60)
  .option('--workspaces <n>', 'workspaces the players are spread over (the sweep walks each on its own)', whole, 1)
  .option('--instances <n>', 'service instances writing (each its own write turn per workspace)', whole, 8)
  .option('--session-minutes <m>', "a session's mean length", whole, 30)
  .option('--sweep-minutes <m>', 'simulated minutes between two rounds of the history sweep (then one full pass at the end)', whole, 360)
  .option('--every-minute', "send every minute's save, not only each restore interval's first")
  .option('--sample <n>', 'players of each group measured with MEMORY USAGE', whole, 1000)
  .option('--seed <n>', 'the population\'s random seed', whole, 1)
  .option('--out <file>', 'results file', fileURLToPath(new URL('./results/population.json', import.meta.url)))
  .parse()
  .opts<{ players: number; days: number; workspaces: number; instances: number; sessionMinutes: number; sweepMinutes: number; everyMinute?: boolean; sample: number; seed: number; out: string }>();

// ---- the population ----------------------------------------------------------------------

const random = seededRandom(opts.seed);

/** Days played: Zipf with exponent 2 over 1..max (P(1) = 61% with max 60). */
const ZIPF: number[] = (() => {
  const weights = Array.from({ length: opts.days }, (_, i) => 1 / (i + 1) ** 2);
  const sum = weights.reduce((a, b) => a + b, 0);
  let acc = 0;
  return weights.map((w) => (acc += w / sum));
})();
function daysPlayed(max: number): number {
  const cap = ZIPF[max - 1]!;
  const u = random() * cap;
  let k = 0;
  while (ZIPF[k]! < u) k++;
  return k + 1;
}

interface Session {
  readonly player: number;
  /** The session's first minute, ms. */
  readonly startMs: number;
  readonly minutes: number;
}

/**
 * Each player arrives on a day drawn evenly over the run and plays that day; if it plays k days,
 * the other k - 1 are drawn among the 2(k - 1) days after its first (every day for those whose
 * k reaches the end of the run), one session a day at an even time of day.
 */
function population(): { byDay: Session[][]; sessions: number } {
  const byDay: Session[][] = Array.from({ length: opts.days }, () => []);
  let sessions = 0;
  for (let player = 0; player < opts.players; player++) {
    const first = Math.floor(random() * opts.days);
    const k = daysPlayed(opts.days - first);
    const window = Math.min(opts.days - 1 - first, 2 * (k - 1));
    const later = Array.from({ length: window }, (_, i) => first + 1 + i);
    for (let i = later.length - 1; i > 0; i--) {
      const j = Math.floor(random() * (i + 1));
      [later[i], later[j]] = [later[j]!, later[i]!];
    }
    for (const day of [first, ...later.slice(0, k - 1)]) {
      const startMinute = Math.floor(random() * 1440);
      const length = Math.max(1, Math.ceil(-Math.log(1 - random()) * opts.sessionMinutes));
      // Saves at the session's second, each minute (the walk orders players by their last save's ms).
      const startMs = START + day * DAY + startMinute * MINUTE + Math.floor(random() * MINUTE);
      byDay[day]!.push({ player, startMs, minutes: Math.min(length, 240, 1440 - startMinute) });
      sessions++;
    }
  }
  return { byDay, sessions };
}

// ---- values ------------------------------------------------------------------------------

/** Random base64: 100-byte JSON strings that LZF cannot compress (an upper bound for history). */
const POOL = randomBytes(1 << 20).toString('base64');
function value(): string {
  const at = Math.floor(random() * (POOL.length - VALUE_BYTES));
  return `"${POOL.slice(at, at + VALUE_BYTES - 2)}"`;
}
const saveOps = (): Op[] => Array.from({ length: KEYS }, (_, k) => ({ op: 'set', key: `k${k}`, valueJson: value() }));

// ---- Redis -------------------------------------------------------------------------------


const playerKeys = (ws: string, user: string) => [keys.player(ws, user), keys.playerHistory(ws, user), keys.playerHistoryCoarse(ws, user), keys.playerHistoryMeta(ws, user)];

interface GroupResult {
  readonly players: number;
  /** used_memory freed when the group's players leave (their keys and list entries), per player. */
  readonly usedMemoryPerPlayer: number;
  /** used_memory of the same data (20 fields of 100 B) in bare HSETs under the same key names, per player. */
  readonly bareHsetPerPlayer: number;
  readonly ratioToBareHset: number;
  /** Means over the sample (MEMORY USAGE, SAMPLES 0). */
  readonly sample: {
    readonly players: number;
    readonly hashBytes: number;
    /** The hash's history fields (the open point, the keys' marks, the byte count): the hash less a copy without them. */
    readonly marksBytes: number;
    /** The fine and coarse lists and their index. */
    readonly listsBytes: number;
    /** marksBytes + listsBytes. */
    readonly historyBytes: number;
    readonly bareHsetBytes: number;
    /** historyBytes / bareHsetBytes (means of each). */
    readonly historyToData: number;
    readonly restorePoints: number;
    /** The history's bytes as counted (\0h, the storage totals'). */
    readonly countedHistoryBytes: number;
    /** Players of the sample with restore points, and the largest history (MEMORY USAGE). */
    readonly withHistory: number;
    readonly maxHistoryBytes: number;
    /** Restore points older than the retention, still held at day 60 (the walk's lag). */
    readonly pointsPastRetention: number;
    readonly historyPercentiles: { readonly p50: number; readonly p90: number; readonly p99: number };
    /** The mean history with a smaller HISTORY_MAX_BYTES, estimated (each history scaled to the cap by its counted bytes). */
    readonly historyIfMaxBytes: Readonly<Record<number, number>>;
  };
}

async function sampleGroup(redis: Redis, ws: string, users: readonly string[], nowMs: number, maxAgeMs: number): Promise<GroupResult['sample']> {
  let hash = 0, marks = 0, lists = 0, bare = 0, points = 0, counted = 0, withHistory = 0, maxHistory = 0, pastRetention = 0;
  const histories: Array<readonly [number, number]> = [];
  await pMap(
    users,
    async (user) => {
      const [P, H, HC, HM] = playerKeys(ws, user) as [string, string, string, string];
      const copy = `pds:q:${P.slice('pds:p:'.length)}`;
      const fields = await redis.hgetall(P);
      const [hashBytes, h, hc, hm, index] = await Promise.all([
        redis.memory('USAGE', P, 'SAMPLES', 0),
        redis.memory('USAGE', H, 'SAMPLES', 0),
        redis.memory('USAGE', HC, 'SAMPLES', 0),
        redis.memory('USAGE', HM, 'SAMPLES', 0),
        redis.hget(HM, 'x'),
      ]);
      // The marks' cost: a fresh copy of the hash against a fresh copy of it without them (a
      // hash does not shrink its table in place, so both are built the same way).
      await redis.copy(P, copy, 'REPLACE');
      const withMarks = Number(await redis.memory('USAGE', copy, 'SAMPLES', 0));
      const historyFields = Object.keys(fields).filter((f) => f.startsWith('\0r') || f === '\0k' || f === '\0h');
      if (historyFields.length > 0) await redis.hdel(copy, ...historyFields);
      const rebuilt = `pds:r:${P.slice('pds:p:'.length)}`;
      await redis.copy(copy, rebuilt, 'REPLACE');
      await redis.del(copy);
      const withoutMarks = Number(await redis.memory('USAGE', rebuilt, 'SAMPLES', 0));
      await redis.del(rebuilt);
      // The same data bare: each data field with its value alone (a stored entry is `[ms,value]`).
      const data = Object.entries(fields).filter(([f]) => !f.startsWith('\0'));
      await redis.hset(copy, ...data.flatMap(([f, entry]) => [f, entry.slice(entry.indexOf(',') + 1, -1)]));
      const bareBytes = Number(await redis.memory('USAGE', copy, 'SAMPLES', 0));
      await redis.del(copy);
      const listBytes = Number(h ?? 0) + Number(hc ?? 0) + Number(hm ?? 0);
      const history = listBytes + withMarks - withoutMarks;
      hash += Number(hashBytes);
      marks += withMarks - withoutMarks;
      lists += listBytes;
      bare += bareBytes;
      counted += Number(fields['\0h'] ?? 0);
      maxHistory = Math.max(maxHistory, history);
      histories.push([history, Number(fields['\0h'] ?? 0)]);
      if (index) {
        // cjson writes an empty list as {}.
        const x = JSON.parse(index) as { f: [number][] | object; c: [number][] | object };
        const all = [...(Array.isArray(x.f) ? x.f : []), ...(Array.isArray(x.c) ? x.c : [])];
        points += all.length;
        pastRetention += all.filter((p) => p[0] < nowMs - maxAgeMs).length;
        withHistory++;
      }
    },
    { concurrency: 16 },
  );
  const n = Math.max(1, users.length);
  // What a smaller HISTORY_MAX_BYTES would leave, roughly: each history scaled down to the cap by
  // its counted bytes (trimming keeps the newest points within it).
  const capped = (cap: number) => Math.round(histories.reduce((a, [memory, c]) => a + (c > cap ? (memory * cap) / c : memory), 0) / n);
  const sorted = histories.map(([memory]) => memory).sort((a, b) => a - b);
  const at = (q: number) => sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] ?? 0;
  return {
    historyPercentiles: { p50: at(0.5), p90: at(0.9), p99: at(0.99) },
    historyIfMaxBytes: { 16384: capped(16384), 32768: capped(32768), 65536: capped(65536) },
    players: users.length,
    hashBytes: Math.round(hash / n),
    marksBytes: Math.round(marks / n),
    listsBytes: Math.round(lists / n),
    historyBytes: Math.round((marks + lists) / n),
    bareHsetBytes: Math.round(bare / n),
    historyToData: bare > 0 ? (marks + lists) / bare : 0,
    restorePoints: points / n,
    countedHistoryBytes: Math.round(counted / n),
    withHistory,
    maxHistoryBytes: maxHistory,
    pointsPastRetention: pastRetention,
  };
}

/** used_memory freed by removing the players (their keys, their entries in both lists), then taken by the same data in bare HSETs. */
async function dropAndCompare(redis: Redis, players: ReadonlyArray<readonly [string, string]>): Promise<{ used: number; bare: number }> {
  const CHUNK = 1000;
  const before = await usedMemory(redis);
  for (let i = 0; i < players.length; i += CHUNK) {
    const pipeline = redis.pipeline();
    for (const [ws, user] of players.slice(i, i + CHUNK)) {
      pipeline.del(...playerKeys(ws, user));
      pipeline.zrem(keys.workspacePlayers(ws), user);
      pipeline.zrem(keys.workspaceHistory(ws), user);
    }
    await pipeline.exec();
  }
  const dropped = await usedMemory(redis);
  const bareFields = () => Array.from({ length: KEYS }, (_, k) => [`k${k}`, value()]).flat();
  for (let i = 0; i < players.length; i += CHUNK) {
    const pipeline = redis.pipeline();
    for (const [ws, user] of players.slice(i, i + CHUNK)) pipeline.hset(keys.player(ws, user), ...bareFields());
    await pipeline.exec();
  }
  const bare = await usedMemory(redis);
  for (let i = 0; i < players.length; i += CHUNK) {
    await redis.del(...players.slice(i, i + CHUNK).map(([ws, user]) => keys.player(ws, user)));
  }
  const n = Math.max(1, players.length);
  return { used: (before - dropped) / n, bare: (bare - dropped) / n };
}

// ---- the run -----------------------------------------------------------------------------

async function main(): Promise<void> {
  const began = Date.now();
  const log = (line: string) => process.stderr.write(`[population ${((Date.now() - began) / 1000).toFixed(0)} s] ${line}\n`);
  // Defaults, but for HISTORY_* settings given in the environment (to weigh another retention).
  const config = loadConfig(Object.fromEntries(Object.entries(process.env).filter(([name]) => name.startsWith('HISTORY_'))));
  const { byDay, sessions } = population();
  log(`${opts.players.toLocaleString('en')} players, ${sessions.toLocaleString('en')} sessions over ${opts.days} days`);

  // As every Redis the project starts (list-compress-depth 1), without an AOF: memory is measured, not durability.
  const bench = await startBenchRedis('population', { appendonly: false });
  try {
    const r = bench.redis;
    const emptyMemory = await usedMemory(r);

    let simNow = START;
    const clock = () => simNow;
    const usage = new StorageUsage(r, config.storage.refreshMs);
    const quota = new StorageQuota(usage, config.storage.quotaBytes, { seconds: config.idempotencyTtlSeconds, overQuotaSeconds: config.idempotencyTtlOverQuotaSeconds });
    const claims = new IdempotencyClaims(r, config.idempotencyTtlSeconds);
    const index = new PlayerIndexRecorder(r);
    const store = new PlayerDataStore(r, playerLimitsOf(config));
    // Several instances, each with its own write turns (one write of a workspace in flight each),
    // waiting longer for a turn than REDIS_COMMAND_TIMEOUT_MS: on a loaded machine a save queued
    // behind others would be refused (nothing written) and sent again, which only costs time.
    const instances = Array.from({ length: opts.instances }, () => new PlayerWrites(store, claims, config.limits, quota, TURN_WAIT_MS, index));
    const sweep = new HistorySweep(r, usage, config, undefined, clock);
    const workspaces = Array.from({ length: opts.workspaces }, (_, i) => `ws_population${i}`);
    for (const id of workspaces) await new WorkspaceStore(r).create({ id, name: id, plan: 'pro', createdAt: new Date(START).toISOString() });
    const workspaceOf = (player: number) => workspaces[player % workspaces.length]!;
    const lastWrite = new Float64Array(opts.players);

    const sweepEvery = opts.sweepMinutes * MINUTE;
    let nextSweep = START + sweepEvery;
    let rounds = 0;
    let swept = 0;
    const sweepUntil = async (t: number) => {
      while (nextSweep <= t) {
        simNow = nextSweep;
        await index.flush();
        await usage.flush();
        for (const ws of workspaces) swept += (await sweep.sweepWorkspace(ws, 'pro')).players;
        rounds++;
        nextSweep += sweepEvery;
      }
    };

    let sent = 0;
    let retried = 0;
    const interval = config.history.intervalMs;
    for (let day = 0; day < opts.days; day++) {
      // The day's saves, in time order: each session's every minute, or each interval's first.
      const times: number[] = [];
      const who: number[] = [];
      for (const s of byDay[day]!) {
        for (let m = 0; m < s.minutes; m++) {
          const t = s.startMs + m * MINUTE;
          if (opts.everyMinute || m === 0 || Math.floor(t / interval) !== Math.floor((t - MINUTE) / interval)) {
            times.push(t);
            who.push(s.player);
          }
        }
      }
      const order = Array.from(times.keys()).sort((a, b) => times[a]! - times[b]!);
      // Between two sweep rounds, players write side by side, each its saves in order: a save
      // carries its own time, and nothing a save does depends on another player's.
      for (let i = 0; i < order.length; ) {
        const windowEnd = Math.max(nextSweep, times[order[i]!]! + 1);
        await sweepUntil(times[order[i]!]!);
        const byPlayer = new Map<number, number[]>();
        for (; i < order.length && times[order[i]!]! < windowEnd; i++) {
          const player = who[order[i]!]!;
          let list = byPlayer.get(player);
          if (list === undefined) byPlayer.set(player, (list = []));
          list.push(times[order[i]!]!);
        }
        await pMap(
          byPlayer,
          async ([player, at]) => {
            const origin = { workspaceId: workspaceOf(player), plan: 'pro', actor: 'key:key_population', path: '/api/v1/data/batch', body: undefined } as const;
            for (const t of at) {
              lastWrite[player] = t;
              const write = { userId: `player${player}`, write: { ops: saveOps() }, kind: 'batch' } as const;
              // A write refused its workspace's turn in time (429 or 503, nothing sent) is sent again, as a game would.
              for (let attempt = 1; ; attempt++) {
                try {
                  await instances[player % instances.length]!.one({ ...origin, nowMs: t } satisfies WriteOrigin, write);
                  break;
                } catch (err) {
                  const refused = err instanceof AppError && (err.code === ErrorCode.RATE_LIMITED || err.code === ErrorCode.STORAGE_UNAVAILABLE);
                  if (!refused || attempt === 10) throw err;
                  retried++;
                  await new Promise((resolve) => setTimeout(resolve, 100 * attempt));
                }
              }
              sent++;
            }
          },
          { concurrency: 2 * instances.length },
        );
      }
      await sweepUntil(START + (day + 1) * DAY);
      log(`day ${day + 1}: ${sent.toLocaleString('en')} saves sent, ${rounds} sweep rounds (${swept.toLocaleString('en')} players swept), used_memory ${((await usedMemory(r)) / 2 ** 20).toFixed(1)} MiB`);
    }
    simNow = START + opts.days * DAY;
    await index.flush();
    await usage.flush();
    // The walk completed once at day 60, as the real sweep (every 30 s, 200 players a round) does
    // within hours: every point past retention leaves, whichever round would have taken it.
    const list = new HistoryList(r);
    let finalRounds = 0;
    for (const ws of workspaces) {
      await list.setPlace(ws, 'walk', LIST_START); // from the first player, a whole pass
      do {
        swept += (await sweep.sweepWorkspace(ws, 'pro')).players;
        finalRounds++;
      } while (Number.isFinite((await list.place(ws, 'walk')).ms));
    }
    await usage.flush();
    log(`day ${opts.days}: the walk completed in ${finalRounds} more rounds`);

    // ---- day 60: the groups ----
    const groups = { lastDay: [] as [string, string][], last30Days: [] as [string, string][], earlier: [] as [string, string][] };
    const maxAgeMs = config.history.maxAgeMs;
    for (let p = 0; p < opts.players; p++) {
      const idle = simNow - lastWrite[p]!;
      const pair: [string, string] = [workspaceOf(p), `player${p}`];
      if (idle <= DAY) groups.lastDay.push(pair);
      else if (idle <= maxAgeMs) groups.last30Days.push(pair);
      else groups.earlier.push(pair);
    }
    const totalMemory = await usedMemory(r);
    const totals = await Promise.all(workspaces.map((ws) => usage.current(ws, simNow)));
    log(`measuring: used_memory ${totalMemory.toLocaleString('en')} B`);
    const pick = (list: readonly [string, string][]) => {
      const chosen = [...list];
      for (let i = chosen.length - 1; i > 0; i--) {
        const j = Math.floor(random() * (i + 1));
        [chosen[i], chosen[j]] = [chosen[j]!, chosen[i]!];
      }
      return chosen.slice(0, opts.sample);
    };
    const results: Record<string, GroupResult> = {};
    const samples: Record<string, GroupResult['sample']> = {};
    for (const [name, list] of Object.entries(groups)) {
      const chosen = pick(list);
      const byWs = new Map<string, string[]>();
      for (const [ws, user] of chosen) byWs.set(ws, [...(byWs.get(ws) ?? []), user]);
      // One workspace's sample at a time; the means are over all of them.
      const parts = await Promise.all([...byWs].map(async ([ws, users]) => [users.length, await sampleGroup(r, ws, users, simNow, maxAgeMs)] as const));
      samples[name] = mergeSamples(parts);
    }
    // Largest first is not needed: each group's drop is measured on its own, oldest group first.
    for (const name of ['earlier', 'last30Days', 'lastDay'] as const) {
      const measured = await dropAndCompare(r, groups[name]);
      results[name] = {
        players: groups[name].length,
        usedMemoryPerPlayer: Math.round(measured.used),
        bareHsetPerPlayer: Math.round(measured.bare),
        ratioToBareHset: measured.bare > 0 ? measured.used / measured.bare : 0,
        sample: samples[name]!,
      };
    }
    const left = await usedMemory(r);

    const monthly = [results['lastDay']!, results['last30Days']!];
    const monthlyPlayers = monthly.reduce((a, g) => a + g.players, 0);
    const mean = (f: (g: GroupResult) => number) => monthly.reduce((a, g) => a + f(g) * g.players, 0) / Math.max(1, monthlyPlayers);
    const monthlyHistory = mean((g) => g.sample.historyBytes);
    const monthlyData = mean((g) => g.sample.bareHsetBytes);
    const idle = results['earlier']!;
    const report = {
      date: new Date().toISOString(),
      durationSeconds: Math.round((Date.now() - began) / 1000),
      machine: { cpuModel: cpus()[0]?.model, cores: cpus().length, loadAverageAtEnd: loadavg()[0] },
      redis: (await r.info('server')).match(/redis_version:(\S+)/)?.[1],
      settings: {
        players: opts.players,
        days: opts.days,
        workspaces: opts.workspaces,
        sessionMinutes: opts.sessionMinutes,
        sweepMinutes: opts.sweepMinutes,
        everyMinute: opts.everyMinute === true,
        seed: opts.seed,
        keys: KEYS,
        valueBytes: VALUE_BYTES,
        historyIntervalSeconds: interval / 1000,
        historyFineHours: config.history.fineMs / 3_600_000,
        historyHourlyHours: config.history.hourlyMs / 3_600_000,
        historyMaxAgeHours: maxAgeMs / 3_600_000,
        historyMaxBytes: config.history.maxBytes,
        historyMaxVersions: config.history.maxVersions,
      },
      sessions,
      savesSent: sent,
      savesRetried: retried,
      sweepRounds: rounds,
      finalSweepRounds: finalRounds,
      usedMemory: {
        empty: emptyMemory,
        atEnd: totalMemory,
        perPlayer: Math.round((totalMemory - emptyMemory) / opts.players),
        /** What the players' removal left (the workspaces' own keys, the lists' emptied shells, Redis's own). */
        afterRemoval: left,
      },
      countedBytes: { bytes: totals.reduce((a, t) => a + t.bytes, 0), historyBytes: totals.reduce((a, t) => a + t.historyBytes, 0) },
      groups: results,
      targets: {
        idleToBareHset: idle.ratioToBareHset,
        idleTarget: 1.3,
        monthlyHistoryToData: monthlyData > 0 ? monthlyHistory / monthlyData : 0,
        monthlyHistoryTarget: 5,
        /** The same with a smaller HISTORY_MAX_BYTES, estimated from the sample. */
        monthlyHistoryToDataIfMaxBytes: Object.fromEntries(
          [16384, 32768, 65536].map((cap) => [cap, monthlyData > 0 ? mean((g) => g.sample.historyIfMaxBytes[cap] ?? 0) / monthlyData : 0]),
        ),
      },
      /** For bench/capacity.ts: a player seen within the history's retention (the last 30 days), data and history. */
      capacity: {
        dataBytesPerPlayer: idle.usedMemoryPerPlayer,
        historyBytesPerPlayer: Math.round(mean((g) => g.usedMemoryPerPlayer) - idle.usedMemoryPerPlayer),
        monthlyBytesPerPlayer: Math.round(mean((g) => g.usedMemoryPerPlayer)),
      },
    };
    mkdirSync(join(opts.out, '..'), { recursive: true });
    writeFileSync(opts.out, JSON.stringify(report, null, 2) + '\n');

    const n = (x: number) => Math.round(x).toLocaleString('en');
    console.log(`${opts.players.toLocaleString('en')} players, ${opts.days} days, ${sessions.toLocaleString('en')} sessions, ${sent.toLocaleString('en')} saves sent; used_memory ${n(report.usedMemory.perPlayer)} B a player`);
    console.log('| players last written | players | used_memory a player | bare HSET a player | ratio | history (sample, MEMORY USAGE) | history / data | restore points | history counted (\\0h) |');
    console.log('|---|---|---|---|---|---|---|---|---|');
    for (const [name, label] of [['lastDay', 'within the last day'], ['last30Days', '1 to 30 days ago'], ['earlier', 'over 30 days ago']] as const) {
      const g = results[name]!;
      console.log(`| ${label} | ${n(g.players)} | ${n(g.usedMemoryPerPlayer)} B | ${n(g.bareHsetPerPlayer)} B | ${g.ratioToBareHset.toFixed(2)}x | ${n(g.sample.historyBytes)} B | ${g.sample.historyToData.toFixed(2)}x | ${g.sample.restorePoints.toFixed(1)} | ${n(g.sample.countedHistoryBytes)} B |`);
    }
    console.log(`a monthly player's history with HISTORY_MAX_BYTES 16/32/64 KiB, estimated: ${Object.values(report.targets.monthlyHistoryToDataIfMaxBytes).map((x) => `${x.toFixed(2)}x`).join(' / ')}`);
    console.log(`targets: idle past retention ${report.targets.idleToBareHset.toFixed(2)}x a bare HSET (at most 1.3x); a monthly player's history ${report.targets.monthlyHistoryToData.toFixed(2)}x its data (at most 5x)`);
    log(`wrote ${opts.out}`);
  } finally {
    await bench.close();
  }
}

function mergeSamples(parts: ReadonlyArray<readonly [number, GroupResult['sample']]>): GroupResult['sample'] {
  const n = parts.reduce((a, [k]) => a + k, 0);
  const mean = (f: (s: GroupResult['sample']) => number) => (n === 0 ? 0 : parts.reduce((a, [k, s]) => a + f(s) * k, 0) / n);
  const history = mean((s) => s.historyBytes);
  const bare = mean((s) => s.bareHsetBytes);
  return {
    players: n,
    hashBytes: Math.round(mean((s) => s.hashBytes)),
    marksBytes: Math.round(mean((s) => s.marksBytes)),
    listsBytes: Math.round(mean((s) => s.listsBytes)),
    historyBytes: Math.round(history),
    bareHsetBytes: Math.round(bare),
    historyToData: bare > 0 ? history / bare : 0,
    restorePoints: mean((s) => s.restorePoints),
    countedHistoryBytes: Math.round(mean((s) => s.countedHistoryBytes)),
    withHistory: parts.reduce((a, [, s]) => a + s.withHistory, 0),
    maxHistoryBytes: Math.max(0, ...parts.map(([, s]) => s.maxHistoryBytes)),
    pointsPastRetention: parts.reduce((a, [, s]) => a + s.pointsPastRetention, 0),
    // Percentiles of the first workspace's sample (one workspace by default).
    historyPercentiles: parts[0]?.[1].historyPercentiles ?? { p50: 0, p90: 0, p99: 0 },
    historyIfMaxBytes: Object.fromEntries([16384, 32768, 65536].map((cap) => [cap, Math.round(mean((s) => s.historyIfMaxBytes[cap] ?? 0))])),
  };
}

runMain('bench:population', main);
