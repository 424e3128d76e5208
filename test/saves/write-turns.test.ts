// A workspace that sends more writes at once than its turn on storage gets through in time
// (issue 38, item 11): the ones queued too long behind their own workspace's turn answer 429
// RATE_LIMITED with Retry-After, at the workspace's own pace, never a 5xx while Redis answers.
// The turn wait is the command timeout (REDIS_COMMAND_TIMEOUT_MS, 2 s here); a proxy adds
// 20 ms to each of Redis's replies, so that a plan's whole window sent at once (300 writes, each
// holding its turn at least 20 ms) outlasts the wait on any machine, while every command is
// answered far within the timeout.
import { expect } from 'chai';
import { Redis } from 'ioredis';
import type { CreatedWorkspace } from '../../src/admin/operations.js';
import type { RunningService } from '../../src/server.js';
import { keys } from '../../src/store/keys.js';
import { testRedisUrl } from '../support/hooks.js';
import { startRedisProxy, type RedisProxy } from '../support/redis-proxy.js';
import { client, newWorkspace, startTestService, type ApiResponse } from '../support/service.js';

const WRITES = 300;
const REPLY_DELAY_MS = 20;

describe('writes queued behind their own workspace turn (saves/write-turns.ts)', function () {
  this.timeout(60_000);
  let direct: Redis;
  let proxy: RedisProxy;
  let service: RunningService;
  let ws: CreatedWorkspace;

  before(async () => {
    direct = new Redis(testRedisUrl());
    // Made before the service subscribes (test/saves/idempotency.test.ts says why).
    ws = await newWorkspace(direct, 'pro');
    proxy = await startRedisProxy(Number(new URL(testRedisUrl()).port));
    service = await startTestService({ REDIS_URL: proxy.url, REDIS_COMMAND_TIMEOUT_MS: '2000', RATE_LIMIT_PRO: '100000' });
  });
  after(async () => {
    await service?.close();
    await proxy?.close();
    direct?.disconnect();
  });

  it(`answers a pro workspace's ${WRITES} writes at once 200 or 429 with Retry-After, never 5xx, with Redis answering`, async () => {
    const api = client(service, ws.apiKey);
    expect((await api.post('/data/set', { userId: 'warm', key: 'k', value: 1 })).status).to.equal(200);
    proxy.delay(REPLY_DELAY_MS);
    let answers: ApiResponse[];
    try {
      answers = await Promise.all(Array.from({ length: WRITES }, (_, i) => api.post('/data/set', { userId: `p${i}`, key: 'k', value: i })));
    } finally {
      proxy.delay(0);
    }
    const byStatus = new Map<string, number>();
    for (const res of answers) byStatus.set(`${res.status} ${res.body?.code ?? ''}`, (byStatus.get(`${res.status} ${res.body?.code ?? ''}`) ?? 0) + 1);
    const summary = JSON.stringify([...byStatus]);
    expect(answers.filter((res) => res.status >= 500), summary).to.deep.equal([]);
    expect(answers.every((res) => res.status === 200 || res.status === 429), summary).to.equal(true);
    // The queue did outlast the wait (else this test shows nothing): some were refused.
    expect(answers.filter((res) => res.status === 429).length, summary).to.be.greaterThan(0);
    for (const [i, res] of answers.entries()) {
      const written = (await direct.exists(keys.player(ws.workspaceId, `p${i}`))) === 1;
      if (res.status === 200) {
        expect(written, `p${i}`).to.equal(true);
        continue;
      }
      expect(res.body).to.include({ success: false, code: 'RATE_LIMITED' });
      expect(res.body.error).to.match(/more writes at once/);
      expect(Number(res.headers.get('retry-after'))).to.be.within(1, 30);
      expect(written, `p${i} refused, yet written`).to.equal(false);
    }
  });

  it('a write ahead that got no answer (its command timed out) refuses the writes queued behind it at once: 503 STORAGE_UNAVAILABLE, nothing sent', async () => {
    const api = client(service, ws.apiKey);
    // The limit's lease in hand, so that nothing but the writes goes to Redis.
    for (let i = 0; i < 3; i++) expect((await api.post('/data/set', { userId: 'warm', key: 'k', value: i })).status).to.equal(200);
    proxy.hold();
    const started = Date.now();
    let answers: Array<ApiResponse & { ms: number }>;
    try {
      answers = await Promise.all(
        ['q0', 'q1', 'q2'].map((userId) => api.post('/data/set', { userId, key: 'k', value: 1 }).then((res) => ({ ...res, ms: Date.now() - started }))),
      );
    } finally {
      proxy.release();
    }
    // The first held its turn for the command timeout (2 s here) and may have run: OUTCOME_UNKNOWN.
    expect(answers[0]!.status).to.equal(503);
    expect(answers[0]!.body.code).to.equal('OUTCOME_UNKNOWN');
    // The two behind it are refused when it leaves, instead of each waiting 2 s more (they answered at 4 and 6 s).
    for (const res of answers.slice(1)) {
      expect(res.status).to.equal(503);
      expect(res.body).to.include({ code: 'STORAGE_UNAVAILABLE' });
      expect(res.ms).to.be.below(3000);
    }
    await new Promise((r) => setTimeout(r, 200));
    for (const userId of ['q1', 'q2']) expect(await direct.exists(keys.player(ws.workspaceId, userId)), userId).to.equal(0);
    // A write after the failure tries Redis again.
    expect((await api.post('/data/set', { userId: 'q1', key: 'k', value: 2 })).status).to.equal(200);
  });
});
