// A workspace's large request bodies (over LARGE_BYTES, declared by Content-Length) run one at a
// time on an instance (http/byte-budget.ts): a second one waits until the first has answered, so
// a neighbour's request waits behind one heavy write of that workspace, never several back to
// back. Real Redis behind a proxy that holds the first write's reply (and every later one):
// what the service sent meanwhile shows which writes had started.
import { expect } from 'chai';
import { Redis } from 'ioredis';
import type { CreatedWorkspace } from '../../src/admin/operations.js';
import type { RunningService } from '../../src/server.js';
import { SCRIPTS } from '../../src/store/redis/scripts.js';
import { testRedisUrl } from '../support/hooks.js';
import { startRedisProxy, type RedisProxy } from '../support/redis-proxy.js';
import { client, newWorkspace, startTestService } from '../support/service.js';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
/** A value of about 100 KB that names itself, so that what the service sent can be searched for it. */
const big = (name: string) => `${name}:${'x'.repeat(100_000)}`;

describe('large request bodies of one workspace run one at a time', () => {
  let direct: Redis;
  let proxy: RedisProxy;
  let service: RunningService;
  let a: CreatedWorkspace;

  before(async () => {
    direct = new Redis(testRedisUrl());
    // Made before the service subscribes (test/saves/idempotency.test.ts says why).
    a = await newWorkspace(direct, 'pro');
    proxy = await startRedisProxy(Number(new URL(testRedisUrl()).port));
    service = await startTestService({ REDIS_URL: proxy.url, REDIS_COMMAND_TIMEOUT_MS: '5000', WORKSPACE_BYTES_PER_SECOND: String(64 * 1024 * 1024) });
    // The key cached and a lease taken: the writes below need Redis for their scripts only.
    for (let i = 0; i < 3; i++) expect((await client(service, a.apiKey).get('/data?userId=warm&key=k')).status).to.equal(404);
  });
  after(async () => {
    proxy.release();
    await service?.close();
    await proxy?.close();
    direct.disconnect();
  });

  it('a second large set of the workspace starts once the first has answered', async () => {
    const write = SCRIPTS.find((s) => s.name === 'writePlayer')!;
    proxy.reset();
    proxy.holdFrom(new RegExp(`${write.sha1}|Apply a player.s write`));
    const first = client(service, a.apiKey).post('/data/set', { userId: 'p1', key: 'blob', value: big('first') });
    await sleep(200);
    const second = client(service, a.apiKey).post('/data/set', { userId: 'p2', key: 'blob', value: big('second') });
    await sleep(500);
    const sent = proxy.sent();
    expect(sent, 'the first write reached Redis').to.include('first:x');
    expect(sent, "the workspace's second large write waits for the first").not.to.include('second:x');
    proxy.release();
    const answers = await Promise.all([first, second]);
    expect(answers.map((r) => r.status)).to.deep.equal([200, 200]);
    expect(proxy.sent()).to.include('second:x');
  });
});
