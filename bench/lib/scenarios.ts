// The request mixes the bench drives. Every scenario rotates API keys (and players) per
// request, so the load is spread over many workspaces as in a real deployment.
import type { Request as AutocannonRequest } from 'autocannon';
import { dataKey, KEYS_PER_PLAYER, PLAYERS_PER_WORKSPACE, playerId, type Seeded } from './seed.js';

export interface Scenario {
  readonly name: string;
  readonly description: string;
  /** The status the scenario expects; anything else is counted as unexpected. */
  readonly expectStatus: number;
  /** Redis commands behind the endpoint, for redis-benchmark (names from redis-bench.ts). */
  readonly redisCeiling?: string;
  requests(seeded: Seeded): AutocannonRequest[];
}

const JSON_HEADERS = { 'content-type': 'application/json' };
const KILOBYTE_VALUE = 'x'.repeat(1000);
const SMALL_OBJECT = { level: 7, items: ['sword', 'shield'], settings: { music: false } };

/** Scrambles a sequence number (murmur3's finalizer), so choices look random but repeat run to run. */
function scramble(i: number): number {
  let h = Math.imul(i ^ (i >>> 16), 0x85ebca6b);
  h = Math.imul(h ^ (h >>> 13), 0xc2b2ae35);
  return (h ^ (h >>> 16)) >>> 0;
}

type Build = (apiKey: string, n: number) => { method: 'GET' | 'POST'; path: string; body?: string };

function rotating(seeded: Seeded, build: Build): AutocannonRequest[] {
  let sequence = 0;
  const keys = seeded.apiKeys;
  return [
    {
      setupRequest: (req) => {
        const i = sequence++;
        const apiKey = keys[i % keys.length]!;
        const r = build(apiKey, scramble(i));
        req.method = r.method;
        req.path = r.path;
        req.headers = r.body === undefined ? { 'x-api-key': apiKey } : { ...JSON_HEADERS, 'x-api-key': apiKey };
        req.body = r.body ?? '';
        return req;
      },
    } as AutocannonRequest,
  ];
}

const getOne: Build = (_k, n) => ({
  method: 'GET',
  path: `/api/v1/data?userId=${playerId(n % PLAYERS_PER_WORKSPACE)}&key=${dataKey((n >>> 4) % KEYS_PER_PLAYER)}`,
});
const getAll: Build = (_k, n) => ({ method: 'GET', path: `/api/v1/data?userId=${playerId(n % PLAYERS_PER_WORKSPACE)}` });
const setValue = (value: unknown): Build => (_k, n) => ({
  method: 'POST',
  path: '/api/v1/data/set',
  body: JSON.stringify({ userId: playerId(n % PLAYERS_PER_WORKSPACE), key: 'blob', value }),
});
/** "Save a player of 20 keys": the keys and their values, the same for both ways. */
export const SAVE_KEYS = 20;
const saveKey = (i: number) => `save${i}`;
const SAVE_VALUE = SMALL_OBJECT;
/** The old way: one POST /data/set per key; 20 of these save one player. */
const savePerKey: Build = (_k, n) => ({
  method: 'POST',
  path: '/api/v1/data/set',
  body: JSON.stringify({ userId: playerId(n % PLAYERS_PER_WORKSPACE), key: saveKey((n >>> 4) % SAVE_KEYS), value: SAVE_VALUE }),
});
const SAVE_OPS = Array.from({ length: SAVE_KEYS }, (_, i) => ({ op: 'set', key: saveKey(i), value: SAVE_VALUE }));
/** The session layer's way: the 20 keys in one POST /data/batch. */
const saveBatch: Build = (_k, n) => ({
  method: 'POST',
  path: '/api/v1/data/batch',
  body: JSON.stringify({ userId: playerId(n % PLAYERS_PER_WORKSPACE), ops: SAVE_OPS }),
});

const incrementHot: Build = () => ({
  method: 'POST',
  path: '/api/v1/data/increment',
  body: '{"userId":"hot","key":"coins","amount":1}',
});

/** Labels of the two ways to save a player of 20 keys (report.ts turns them into players/s). */
export const SAVE_PLAYER = { perKey: 'save20 per-key', batch: 'save20 batch' } as const;

export const SCENARIOS: readonly Scenario[] = [
  {
    name: 'ping',
    description: 'GET /ping',
    expectStatus: 200,
    requests: (s) => rotating(s, () => ({ method: 'GET', path: '/api/v1/ping' })),
  },
  {
    name: 'get',
    description: 'GET /data one value',
    expectStatus: 200,
    redisCeiling: 'hget',
    requests: (s) => rotating(s, getOne),
  },
  {
    name: 'getAll',
    description: 'GET /data all 10 keys',
    expectStatus: 200,
    redisCeiling: 'hgetall',
    requests: (s) => rotating(s, getAll),
  },
  {
    name: 'set',
    description: 'POST /data/set 1 KB value',
    expectStatus: 200,
    redisCeiling: 'writePlayerSet',
    requests: (s) => rotating(s, setValue(KILOBYTE_VALUE)),
  },
  {
    name: 'increment',
    description: 'POST /data/increment hot key',
    expectStatus: 200,
    redisCeiling: 'writePlayerIncrement',
    requests: (s) => rotating(s, incrementHot),
  },
  {
    name: 'mix',
    description: '60% get, 20% getAll, 10% set, 10% increment',
    expectStatus: 200,
    requests: (s) =>
      rotating(s, (k, n) => {
        const pick = n % 10;
        if (pick < 6) return getOne(k, n >>> 4);
        if (pick < 8) return getAll(k, n >>> 4);
        if (pick < 9) return setValue(SMALL_OBJECT)(k, n >>> 4);
        return incrementHot(k, n);
      }),
  },
  {
    name: SAVE_PLAYER.perKey,
    description: `save a player of ${SAVE_KEYS} keys: POST /data/set per key`,
    expectStatus: 200,
    requests: (s) => rotating(s, savePerKey),
  },
  {
    name: SAVE_PLAYER.batch,
    description: `save a player of ${SAVE_KEYS} keys: one POST /data/batch of ${SAVE_KEYS} sets`,
    expectStatus: 200,
    requests: (s) => rotating(s, saveBatch),
  },
  {
    name: 'limited',
    description: 'GET /data answered 429',
    expectStatus: 429,
    redisCeiling: 'rateLimit',
    requests: (s) => [
      {
        method: 'GET',
        path: `/api/v1/data?userId=${playerId(1)}&key=${dataKey(1)}`,
        headers: { 'x-api-key': s.limitedKey },
      },
    ],
  },
];

/** What the references are asked: the same path as `get`, so routing work is comparable. */
export const REFERENCE_SCENARIO: Scenario = {
  name: 'reference',
  description: 'GET /api/v1/data',
  expectStatus: 200,
  requests: (s) => rotating(s, getOne),
};
