// The leaderboard scenarios: one board of BENCH_BOARD_ENTRIES (1,000,000) players, read for its
// top 100, a player's rank, and incremented for a random player, each against a Koa reference
// doing the same request with one Redis command (references/koa-board.ts) on a bare sorted set
// of the same entries. The board's workspace is a single workspace, so the service that runs
// these has the pro plan's limit raised out of reach (one workspace, not 2,000 rotated).
// Memory: used_memory over the entries of the service's board against the bare sorted set's.
import type { Redis } from 'ioredis';
import type { Request as AutocannonRequest } from 'autocannon';
import { BoardRegistry } from '../../src/store/boards/board-registry.js';
import { LeaderboardStore } from '../../src/store/boards/leaderboard-store.js';
import { writeBoardEntries } from '../../src/store/boards/board-transfer.js';
import { periodAt } from '../../src/domain/periods.js';
import { REFERENCE_BOARD_KEY } from '../references/listen.js';
import { round, type Row } from './report.js';
import { usedMemory } from './redis-stats.js';
import type { Scenario } from './scenarios.js';
import type { Seeded } from './seed.js';

export const BOARD = 'bench';
const CHUNK = 1000;

export const BOARD_LABELS = { top: 'board top100', rank: 'board rank', increment: 'board increment' } as const;
export const BOARD_REFERENCES = {
  top: 'ref: Koa + ZRANGE REV (board top100)',
  rank: 'ref: Koa + ZREVRANK+ZSCORE (board rank)',
  increment: 'ref: Koa + ZINCRBY (board increment)',
} as const;

/** The same sequence-number scrambler as scenarios.ts: players look random, repeat run to run. */
function scramble(i: number): number {
  let h = Math.imul(i ^ (i >>> 16), 0x85ebca6b);
  h = Math.imul(h ^ (h >>> 13), 0xc2b2ae35);
  return (h ^ (h >>> 16)) >>> 0;
}

const userOf = (i: number) => `u${i}`;
const scoreOf = (i: number) => scramble(i) % 1_000_000;

export interface BoardMemory {
  readonly entries: number;
  readonly serviceBytesPerEntry: number;
  readonly bareZaddBytesPerEntry: number;
  readonly ratio: number;
}

/** Fills the board of the first seeded workspace and the references' bare sorted set. */
export async function seedBoard(redis: Redis, workspaceId: string, entries: number): Promise<BoardMemory> {
  const store = new LeaderboardStore(redis, new BoardRegistry(redis, 1000), { maxEntries: 10_000_000, idempotencyTtlSeconds: 86_400 });
  await store.registry.register(workspaceId, BOARD, Date.now());
  await store.syncMeta(workspaceId, BOARD, ['all'], true);
  const window = periodAt('all', 0);
  const before = await usedMemory(redis);
  for (let start = 0; start < entries; start += CHUNK) {
    const chunk: Array<readonly [string, string]> = [];
    for (let i = start; i < Math.min(entries, start + CHUNK); i++) chunk.push([userOf(i), String(scoreOf(i))]);
    await writeBoardEntries(redis, workspaceId, BOARD, window, chunk, 10_000_000, Date.now());
  }
  const service = (await usedMemory(redis)) - before;
  const bareBefore = await usedMemory(redis);
  for (let start = 0; start < entries; start += CHUNK) {
    const args: Array<string | number> = [];
    for (let i = start; i < Math.min(entries, start + CHUNK); i++) args.push(scoreOf(i), userOf(i));
    await redis.zadd(REFERENCE_BOARD_KEY, ...args);
  }
  const bare = (await usedMemory(redis)) - bareBefore;
  return {
    entries,
    serviceBytesPerEntry: Math.round(service / entries),
    bareZaddBytesPerEntry: Math.round(bare / entries),
    ratio: round(service / bare),
  };
}

const JSON_HEADERS = { 'content-type': 'application/json' };

function boardRequests(entries: number, build: (n: number) => { method: 'GET' | 'POST'; path: string; body?: string }) {
  return (seeded: Seeded): AutocannonRequest[] => {
    let sequence = 0;
    const apiKey = seeded.apiKeys[0]!;
    return [
      {
        setupRequest: (req) => {
          const r = build(scramble(sequence++) % entries);
          req.method = r.method;
          req.path = r.path;
          req.headers = r.body === undefined ? { 'x-api-key': apiKey } : { ...JSON_HEADERS, 'x-api-key': apiKey };
          req.body = r.body ?? '';
          return req;
        },
      } as AutocannonRequest,
    ];
  };
}

/** The three scenarios; the references take the very same requests. */
export function boardScenarios(entries: number): Record<keyof typeof BOARD_LABELS, Scenario> {
  return {
    top: {
      name: BOARD_LABELS.top,
      description: `GET /leaderboards/${BOARD}?limit=100, a board of ${entries} entries`,
      expectStatus: 200,
      requests: boardRequests(entries, () => ({ method: 'GET', path: `/api/v1/leaderboards/${BOARD}?limit=100` })),
    },
    rank: {
      name: BOARD_LABELS.rank,
      description: `GET /leaderboards/${BOARD}/players/<random player>`,
      expectStatus: 200,
      requests: boardRequests(entries, (n) => ({ method: 'GET', path: `/api/v1/leaderboards/${BOARD}/players/${userOf(n)}` })),
    },
    increment: {
      name: BOARD_LABELS.increment,
      description: `POST /leaderboards/${BOARD}/increment a random player by 1`,
      expectStatus: 200,
      requests: boardRequests(entries, (n) => ({
        method: 'POST',
        path: `/api/v1/leaderboards/${BOARD}/increment`,
        body: `{"userId":"${userOf(n)}","amount":1}`,
      })),
    },
  };
}

export interface BoardResult {
  readonly scenario: string;
  readonly requestsPerSecond: number;
  readonly reference: string;
  readonly referenceRequestsPerSecond: number;
  readonly ratio: number | null;
  readonly p99Ms: number;
  /**
   * CPU a request of the reference (its process and Redis's) over ours: the throughput ratio
   * to expect when both are CPU-bound, steadier than requests/s on a busy machine.
   */
  readonly cpuRatio: number | null;
  /** The targets of issue 30: at least 0.8 of the reference, p99 under 10 ms. */
  readonly met: boolean;
}

export function boardSummary(rows: readonly Row[]): BoardResult[] {
  const out: BoardResult[] = [];
  for (const key of Object.keys(BOARD_LABELS) as Array<keyof typeof BOARD_LABELS>) {
    const row = rows.find((r) => r.label === BOARD_LABELS[key]);
    const ref = rows.find((r) => r.label === BOARD_REFERENCES[key]);
    if (!row || !ref) continue;
    const ratio = ref.heavy.requestsPerSecond > 0 ? round(row.heavy.requestsPerSecond / ref.heavy.requestsPerSecond) : null;
    out.push({
      scenario: row.label,
      requestsPerSecond: Math.round(row.heavy.requestsPerSecond),
      reference: ref.label,
      referenceRequestsPerSecond: Math.round(ref.heavy.requestsPerSecond),
      ratio,
      p99Ms: row.heavy.p99,
      cpuRatio: round(
        (ref.heavy.cpuMicrosPerRequest + ref.heavy.redisMicrosPerRequest) / (row.heavy.cpuMicrosPerRequest + row.heavy.redisMicrosPerRequest),
      ),
      met: ratio !== null && ratio >= 0.8 && row.heavy.p99 < 10,
    });
  }
  return out;
}

export function boardText(results: readonly BoardResult[], memory: BoardMemory | undefined): string {
  const lines = results.map(
    (r) =>
      `${r.scenario}: ${r.requestsPerSecond} req/s, ${r.ratio ?? '-'}x ${r.reference} (${r.referenceRequestsPerSecond}), ` +
      `CPU a request (service + Redis) ${r.cpuRatio ?? '-'}x, p99 ${r.p99Ms} ms @50: target ${r.met ? 'met' : 'NOT met'}`,
  );
  if (memory) {
    lines.push(
      `memory per board entry (${memory.entries} entries): service ${memory.serviceBytesPerEntry} B, bare ZADD ${memory.bareZaddBytesPerEntry} B, ratio ${memory.ratio}`,
    );
  }
  return lines.join('\n');
}
