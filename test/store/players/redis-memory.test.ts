// The estimate of what players' data costs in Redis (src/store/players/redis-memory.ts), held
// within ±20% of MEMORY USAGE on players of typical shapes written through the service: small
// values, many keys, large values. The counted bytes alone are not (a one-key player: 0.2x).
// The same for players held by sessions before they have data (lua/includes/session.lua's
// heldBytes, saves/storage-quota.ts's heldBytesOf), by the length of their owner. On a single
// Redis and on a Redis Cluster (whose nodes hold the same hashes).
import { expect } from 'chai';
import { Cluster, type Redis } from 'ioredis';
import { heldBytesOfField } from '../../../src/saves/storage-quota.js';
import type { RunningService } from '../../../src/server.js';
import { keys } from '../../../src/store/keys.js';
import { estimatedRedisBytes } from '../../../src/store/players/redis-memory.js';
import type { RedisClient } from '../../../src/store/redis/redis.js';
import { startCluster, type TestCluster } from '../../support/cluster.js';
import { client, newWorkspace, startTestService, testRedis } from '../../support/service.js';

/** [players' shape, keys, value length]: JSON strings of that many characters. */
const SHAPES: ReadonlyArray<readonly [string, number, number]> = [
  ['one small key', 1, 10],
  ['20 small keys', 20, 10],
  ['20 keys of 100 B', 20, 100],
  ['100 keys of 20 B', 100, 20],
  ['1000 keys of 100 B', 1000, 100],
  ['3 keys of 2 KB', 3, 2000],
  ['50 keys of 5 KB', 50, 5000],
  ['5 keys of 50 KB', 5, 50_000],
  ['1 key of 500 KB', 1, 500_000],
];

/** Owners' lengths of players held without data: listpack up to a 64-byte session field, hashtable past it. */
const OWNERS = [1, 8, 14, 15, 32, 64, 128];

const memoryUsage = async (redis: RedisClient, key: string) => Number(await redis.call('MEMORY', 'USAGE', key, 'SAMPLES', '0'));

function estimates(setup: () => { service: RunningService; redis: RedisClient }) {
  it('is within ±20% of MEMORY USAGE for small values, many keys and large values', async () => {
    const { service, redis } = setup();
    const ws = await newWorkspace(redis as Redis, 'pro');
    const api = client(service, ws.apiKey);
    const rows: string[] = [];
    let worstCounted = Infinity;
    for (const [shape, count, length] of SHAPES) {
      const userId = shape.replace(/\W+/g, '-');
      for (let first = 0; first < count; first += 100) {
        const ops = [];
        for (let i = first; i < Math.min(count, first + 100); i++) ops.push({ op: 'set', key: `key_${i}`, value: 'v'.repeat(length) });
        expect((await api.post('/data/batch', { players: [{ userId, ops }] })).status).to.equal(200);
      }
      const hash = keys.player(ws.workspaceId, userId);
      const counted = Number(await redis.hget(hash, '\0b'));
      const memory = await memoryUsage(redis, hash);
      const ratio = estimatedRedisBytes(counted, 1) / memory;
      worstCounted = Math.min(worstCounted, counted / memory);
      rows.push(`${shape}: counted ${counted}, MEMORY USAGE ${memory}, estimate/memory ${ratio.toFixed(2)}`);
      expect(ratio, rows.join('\n')).to.be.within(0.8, 1.2);
    }
    // The counted bytes alone fall far outside ±20% for a small player: the estimate is what makes it hold.
    expect(worstCounted).to.be.below(0.8);
  });

  it('is within ±20% of MEMORY USAGE for players held without data, short and long owners, a renewal and messages handed over', async () => {
    const { service, redis } = setup();
    const ws = await newWorkspace(redis as Redis, 'pro');
    const api = client(service, ws.apiKey);
    const rows: string[] = [];
    const outside: string[] = [];
    for (const length of OWNERS) {
      for (const variant of ['acquired', 'renewed', 'loaded with a message'] as const) {
        const userId = `held-${length}-${variant.replace(/\W+/g, '-')}`;
        if (variant === 'loaded with a message') expect((await api.post('/messages', { userId, message: { gift: 1 } })).status).to.equal(200);
        const acquired = await api.post('/sessions/acquire', { userId, owner: 'o'.repeat(length), load: variant === 'loaded with a message' });
        expect(acquired.status).to.equal(200);
        if (variant === 'renewed') {
          const renewed = await api.post('/sessions/renew', { userId, sessionId: acquired.body.data.sessionId, ttlSeconds: 3600 });
          expect(renewed.status).to.equal(200);
        }
        const hash = keys.player(ws.workspaceId, userId);
        const field = Buffer.byteLength((await redis.hget(hash, '\0s'))!);
        const memory = await memoryUsage(redis, hash);
        const ratio = heldBytesOfField(field) / memory;
        rows.push(`owner of ${length}, ${variant}: session field ${field} B, MEMORY USAGE ${memory}, counted/memory ${ratio.toFixed(2)}`);
        if (ratio < 0.8 || ratio > 1.2) outside.push(rows.at(-1)!);
      }
    }
    expect(outside, rows.join('\n')).to.deep.equal([]);
  });
}

describe('store: the Redis memory of players, estimated from the counted bytes (single Redis)', function () {
  this.timeout(30_000);
  const handles = {} as { service: RunningService; redis: Redis };
  before(async () => {
    handles.service = await startTestService({ HISTORY_MAX_VERSIONS: '0', RATE_LIMIT_PRO: '100000' });
    handles.redis = testRedis();
  });
  after(async () => {
    await handles.service?.close();
    handles.redis?.disconnect();
  });
  estimates(() => handles);
});

describe('store: the Redis memory of players, estimated from the counted bytes (Redis Cluster)', function () {
  this.timeout(90_000);
  let cluster: TestCluster;
  const handles = {} as { service: RunningService; redis: Cluster };
  before(async () => {
    cluster = await startCluster();
    handles.service = await startTestService({ REDIS_CLUSTER_NODES: cluster.seeds, HISTORY_MAX_VERSIONS: '0', RATE_LIMIT_PRO: '100000' });
    handles.redis = new Cluster([{ host: '127.0.0.1', port: cluster.nodes[0]!.port }]);
    handles.redis.on('error', () => {});
  });
  after(async () => {
    await handles.service?.close();
    handles.redis?.disconnect();
    await cluster?.stop();
  });
  estimates(() => handles);
});
