// Idempotency keys: a retry replays the first answer and writes nothing, another request with
// the key is 422, a repeat during the first is 409, and the claim plus the write cost at most
// two Redis round trips.
import { expect } from 'chai';
import { Redis } from 'ioredis';
import { keys } from '../../src/store/keys.js';
import { testRedisUrl } from '../support/hooks.js';
import { startRedisProxy } from '../support/redis-proxy.js';
import { client, newWorkspace, startTestService, useService } from '../support/service.js';

describe('safe saves: idempotent writes', () => {
  const t = useService();
  let api: ReturnType<typeof client>;
  let workspaceId: string;

  beforeEach(async () => {
    const ws = await newWorkspace(t.redis);
    workspaceId = ws.workspaceId;
    api = client(t.service, ws.apiKey);
  });

  const withKey = (key: string) => ({ headers: { 'Idempotency-Key': key } });

  it('counts an increment retried 10 times once, replaying the first answer with Idempotent-Replayed', async () => {
    const body = { userId: 1, key: 'coins', amount: 100 };
    const first = await api.post('/data/increment', body, withKey('purchase-1234'));
    expect(first.body).to.deep.equal({ success: true, value: 100, version: 1 });
    expect(first.headers.get('idempotent-replayed')).to.equal(null);
    for (let i = 0; i < 10; i++) {
      const again = await api.post('/data/increment', body, withKey('purchase-1234'));
      expect(again.status).to.equal(200);
      expect(again.text).to.equal(first.text);
      expect(again.headers.get('idempotent-replayed')).to.equal('true');
    }
    expect((await api.get('/data?userId=1&key=coins')).body).to.deep.include({ version: 1 });
    expect((await api.get('/data?userId=1&key=coins')).body.data.value).to.equal(100);
  });

  it('replays every write byte for byte: set, delete, batch, and the first answer even when it was a refusal', async () => {
    const set = await api.post('/data/set', { userId: 2, key: 'inv', value: { sword: 1 } }, withKey('k-set'));
    await new Promise((r) => setTimeout(r, 5));
    const setAgain = await api.post('/data/set', { userId: 2, key: 'inv', value: { sword: 1 } }, withKey('k-set'));
    expect(setAgain.text).to.equal(set.text);

    const batchBody = { userId: 2, ops: [{ op: 'increment', key: 'coins', amount: 2 }, { op: 'delete', key: 'inv' }] };
    const batch = await api.post('/data/batch', batchBody, withKey('k-batch'));
    expect((await api.post('/data/batch', batchBody, withKey('k-batch'))).text).to.equal(batch.text);

    const conflict = await api.post('/data/set', { userId: 2, key: 'x', value: 1, ifVersion: 0 }, withKey('k-conflict'));
    expect(conflict.body.code).to.equal('VERSION_CONFLICT');
    await api.post('/data/set', { userId: 2, key: 'y', value: 1 });
    const replayed = await api.post('/data/set', { userId: 2, key: 'x', value: 1, ifVersion: 0 }, withKey('k-conflict'));
    expect(replayed.status).to.equal(409);
    expect(replayed.text).to.equal(conflict.text);
    expect(replayed.headers.get('idempotent-replayed')).to.equal('true');

    const many = { players: [{ userId: 10, ops: [{ op: 'increment', key: 'c' }] }, { userId: 11, ops: [{ op: 'increment', key: 'c' }] }] };
    const first = await api.post('/data/batch', many, withKey('k-many'));
    const second = await api.post('/data/batch', many, withKey('k-many'));
    expect(second.text).to.equal(first.text);
    expect(second.headers.get('idempotent-replayed')).to.equal('true');
    expect((await api.get('/data?userId=11&key=c')).body.data.value).to.equal(1);
  });

  it('refuses the same key with another request with 422, even for another player, and writes nothing', async () => {
    await api.post('/data/increment', { userId: 3, key: 'coins', amount: 5 }, withKey('shared'));
    for (const [path, body] of [
      ['/data/increment', { userId: 3, key: 'coins', amount: 6 }],
      ['/data/increment', { userId: 4, key: 'coins', amount: 5 }],
      ['/data/set', { userId: 3, key: 'coins', value: 5 }],
    ] as const) {
      const res = await api.post(path, body, withKey('shared'));
      expect(res.status, JSON.stringify(body)).to.equal(422);
      expect(res.body.code).to.equal('IDEMPOTENCY_KEY_REUSED');
    }
    expect((await api.get('/data?userId=3&key=coins')).body.data.value).to.equal(5);
    expect((await api.get('/data?userId=4')).status).to.equal(404);
    // The same key in another workspace is another key.
    const other = await newWorkspace(t.redis);
    const res = await client(t.service, other.apiKey).post('/data/increment', { userId: 4, key: 'coins', amount: 5 }, withKey('shared'));
    expect(res.status).to.equal(200);
  });

  it('applies concurrent duplicates once: every answer is the first answer or IDEMPOTENCY_IN_PROGRESS', async () => {
    const body = { userId: 5, key: 'coins', amount: 1 };
    const answers = await Promise.all(Array.from({ length: 20 }, () => api.post('/data/increment', body, withKey('burst'))));
    for (const a of answers) {
      if (a.status === 200) expect(a.body).to.deep.equal({ success: true, value: 1, version: 1 });
      else expect(a.body.code).to.equal('IDEMPOTENCY_IN_PROGRESS');
    }
    expect(answers.some((a) => a.status === 200)).to.equal(true);
    expect((await api.get('/data?userId=5&key=coins')).body.data.value).to.equal(1);
  });

  it('keeps the session calls idempotent: a retried acquire returns the same session', async () => {
    const body = { userId: 6, owner: 'job-A' };
    const first = await api.post('/sessions/acquire', body, withKey('join-6'));
    const again = await api.post('/sessions/acquire', body, withKey('join-6'));
    expect(again.text).to.equal(first.text);
    const other = await api.post('/sessions/acquire', { userId: 6, owner: 'job-B' });
    expect(other.body.code).to.equal('SESSION_LOCKED');
  });

  it('refuses a malformed Idempotency-Key with 400', async () => {
    const res = await api.post('/data/set', { userId: 7, key: 'k', value: 1 }, withKey('x'.repeat(129)));
    expect(res.status).to.equal(400);
    expect(res.body.error).to.match(/Idempotency-Key/);
    expect((await api.get('/data?userId=7')).status).to.equal(404);
  });

  it('keeps the answer for the configured time, with the write, in the player\'s slot', async () => {
    await api.post('/data/set', { userId: 8, key: 'k', value: 1 }, withKey('ttl-check'));
    const found = await t.redis.keys(`${keys.player(workspaceId, '8')}:i:*`);
    expect(found).to.have.length(1);
    const ttl = await t.redis.ttl(found[0]!);
    expect(ttl).to.be.within(86_000, 86_400);
  });

  describe('with IDEMPOTENCY_TTL_SECONDS set', () => {
    const TTL = 7200;
    const s = useService({ IDEMPOTENCY_TTL_SECONDS: String(TTL) });
    /** Remaining seconds of each key matching `pattern`: one key expected. */
    const ttlOf = async (pattern: string) => {
      const found = await s.redis.keys(pattern);
      expect(found, pattern).to.have.length(1);
      return s.redis.ttl(found[0]!);
    };

    it("keeps the workspace's claim of the key and a write's answer for that long", async () => {
      const ws = await newWorkspace(s.redis);
      const res = await client(s.service, ws.apiKey).post('/data/set', { userId: 1, key: 'k', value: 1 }, withKey('ttl-write'));
      expect(res.status).to.equal(200);
      expect(await ttlOf(`${keys.idempotencyClaim(ws.workspaceId, '*')}`)).to.be.within(TTL - 60, TTL);
      expect(await ttlOf(`${keys.player(ws.workspaceId, '1')}:i:*`)).to.be.within(TTL - 60, TTL);
    });

    it("keeps a session call's answer for that long", async () => {
      const ws = await newWorkspace(s.redis);
      const res = await client(s.service, ws.apiKey).post('/sessions/acquire', { userId: 2, owner: 'job-A' }, withKey('ttl-session'));
      expect(res.status).to.equal(200);
      expect(await ttlOf(`${keys.player(ws.workspaceId, '2')}:i:*`)).to.be.within(TTL - 60, TTL);
      expect(await ttlOf(`${keys.idempotencyClaim(ws.workspaceId, '*')}`)).to.be.within(TTL - 60, TTL);
    });
  });

  describe('round trips and the in-flight repeat', () => {
    it('claims the key, then writes: two round trips; a repeat while the first waits on Redis is 409', async () => {
      const port = Number(new URL(testRedisUrl()).port);
      const direct = new Redis(testRedisUrl());
      // Made before the service subscribes, so that its creation events (which drop the key
      // from the cache) can never arrive after the warm-up below has cached the key.
      const ws = await newWorkspace(direct);
      const proxy = await startRedisProxy(port);
      const service = await startTestService({ REDIS_URL: proxy.url });
      try {
        const c = client(service, ws.apiKey);
        // Warm the key cache and take leases (of 5, then 9 requests), so that the write and its
        // repeat below need Redis for themselves only.
        for (let i = 0; i < 5; i++) await c.get('/ping');
        const acquired = await c.post('/sessions/acquire', { userId: 1, owner: 'job-A' });
        const sessionId = acquired.body.data.sessionId as string;
        proxy.reset();
        proxy.hold();
        const body = { userId: 1, key: 'coins', amount: 1, sessionId };
        const first = c.post('/data/increment', body, withKey('rt'));
        await new Promise((r) => setTimeout(r, 100));
        // First round trip: the claim alone; the script waits for its answer.
        expect(proxy.sent()).to.match(/SET/);
        expect(proxy.sent()).to.not.match(/evalsha|eval/i);
        const repeat = await c.post('/data/increment', body, withKey('rt'));
        expect(repeat.status).to.equal(409);
        expect(repeat.body.code).to.equal('IDEMPOTENCY_IN_PROGRESS');
        proxy.release();
        const answer = await first;
        expect(answer.body).to.deep.equal({ success: true, value: 1, version: 1 });
        // Second and last round trip: the write with its session check and kept answer.
        const sent = proxy.sent();
        // (ioredis sends EVAL with the script's text the first time a connection runs it, EVALSHA after.)
        expect(sent.match(/\r\n(evalsha|eval)\r\n/gi) ?? []).to.have.length(1);
        expect(sent.match(/\r\nset\r\n/gi) ?? []).to.have.length(1);
        expect(sent.match(/\r\n\*\d+\r\n/g)?.length ?? 0).to.be.at.most(4);
      } finally {
        proxy.release();
        await service.close();
        direct.disconnect();
        await proxy.close();
      }
    });
  });
});
