import { expect } from 'chai';
import type { Redis } from 'ioredis';
import { publishEvent } from '../../src/store/redis/events.js';
import { keys } from '../../src/store/keys.js';
import { usageDay } from '../../src/store/workspaces/rate-limiter.js';
import { WorkspaceStore } from '../../src/store/workspaces/workspaces.js';
import { call, newWorkspace, useService } from '../support/service.js';

/** Calls of the given commands the test Redis has run so far (scripts' inner calls included). */
async function calls(redis: Redis, ...names: string[]): Promise<number> {
  const stats = await redis.info('commandstats');
  return names.reduce((sum, name) => sum + Number(new RegExp(`cmdstat_${name}:calls=(\\d+)`).exec(stats)?.[1] ?? 0), 0);
}

/** A free workspace (limit 2 here) with a player, whose window's budget the two reads given have spent. */
async function overLimit(t: ReturnType<typeof useService>) {
  const ws = await newWorkspace(t.redis, 'free');
  await t.redis.hset(keys.player(ws.workspaceId, 'p1'), 'coins', '[1,5]');
  for (let i = 0; i < 2; i++) expect((await call(t.service, 'GET', '/data?userId=p1&key=coins', { key: ws.apiKey })).status).to.equal(200);
  return ws;
}

describe('rate limit fast paths', () => {
  const t = useService({ RATE_LIMIT_FREE: '2', USAGE_FLUSH_MS: '250' });

  it('reads alongside the limiter, yet a limited read answers 429 whatever the data', async () => {
    const ws = await overLimit(t);
    for (const path of ['/data?userId=p1&key=coins', '/data?userId=nobody&key=coins', '/data?userId=p1']) {
      const res = await call(t.service, 'GET', path, { key: ws.apiKey });
      expect(res.status, path).to.equal(429);
      expect(res.body).to.deep.include({ success: false });
      expect(res.headers.get('retry-after')).to.match(/^\d+$/);
      expect(res.headers.get('x-ratelimit-remaining')).to.equal('0');
    }
  });

  it('a write over the limit is refused before it writes', async () => {
    const ws = await overLimit(t);
    const res = await call(t.service, 'POST', '/data/set', { key: ws.apiKey, body: { userId: 'p1', key: 'coins', value: 99 } });
    expect(res.status).to.equal(429);
    expect(await t.redis.hget(keys.player(ws.workspaceId, 'p1'), 'coins')).to.equal('[1,5]');
  });

  it('once Redis said 429, more 429s of that workspace still count as usage', async () => {
    const ws = await overLimit(t);
    expect((await call(t.service, 'GET', '/ping', { key: ws.apiKey })).status).to.equal(429);
    for (const path of ['/ping', '/data?userId=p1&key=coins', '/data?userId=p1', '/ping']) {
      expect((await call(t.service, 'GET', path, { key: ws.apiKey })).status, path).to.equal(429);
    }
    expect((await call(t.service, 'POST', '/data/set', { key: ws.apiKey, body: { userId: 'p1', key: 'coins', value: 1 } })).status).to.equal(429);

    const usage = keys.usage(ws.workspaceId, usageDay(Date.now()));
    // Written every USAGE_FLUSH_MS (250 ms here), with no request needed to trigger it.
    let counted: Record<string, string> = {};
    for (let i = 0; i < 40 && counted['limited'] !== '6'; i++) {
      await new Promise((r) => setTimeout(r, 100));
      counted = await t.redis.hgetall(usage);
    }
    expect(counted).to.deep.equal({ requests: '8', limited: '6' });
    expect(await t.redis.ttl(usage)).to.be.greaterThan(86_400);
  });

  it('a plan change lifts the local refusal at once', async () => {
    const ws = await overLimit(t);
    expect((await call(t.service, 'GET', '/ping', { key: ws.apiKey })).status).to.equal(429);
    await new WorkspaceStore(t.redis).setPlan(ws.workspaceId, 'pro');
    await publishEvent(t.redis, { type: 'workspace', workspaceId: ws.workspaceId });
    let res = await call(t.service, 'GET', '/ping', { key: ws.apiKey });
    for (let i = 0; i < 20 && res.status !== 200; i++) {
      await new Promise((r) => setTimeout(r, 50));
      res = await call(t.service, 'GET', '/ping', { key: ws.apiKey });
    }
    expect(res.status).to.equal(200);
    expect(res.body.plan).to.equal('pro');
  });
});

// Counting commands with INFO commandstats sees every command of the process: the service's own
// timers (usage, last-use, players-list, storage and stats flushes) are pushed past the test, or
// a flush landing between the two counts fails it on a slow machine (seen at load average 13).
describe('rate limit fast paths: Redis commands', () => {
  const t = useService({
    RATE_LIMIT_FREE: '2',
    USAGE_FLUSH_MS: '600000',
    KEY_LAST_USED_FLUSH_MS: '600000',
    PLAYER_INDEX_FLUSH_MS: '600000',
    STORAGE_FLUSH_MS: '60000',
    STATS_FLUSH_MS: '60000',
  });

  it('a read under the limit costs one script call and one read, and carries the limit headers', async () => {
    const ws = await newWorkspace(t.redis, 'free');
    await t.redis.hset(keys.player(ws.workspaceId, 'p1'), 'coins', '[1,5]');
    // A service's first call of a script is an EVAL (ioredis), later ones EVALSHA.
    const before = await calls(t.redis, 'evalsha', 'eval', 'hmget');
    const res = await call(t.service, 'GET', '/data?userId=p1&key=coins', { key: ws.apiKey });
    expect(res.status).to.equal(200);
    expect(res.body.data.value).to.equal(5);
    expect(res.headers.get('x-ratelimit-limit')).to.equal('2');
    expect(res.headers.get('x-ratelimit-remaining')).to.equal('1');
    expect((await calls(t.redis, 'evalsha', 'eval', 'hmget')) - before).to.equal(2);
  });

  it('once Redis said 429, more 429s of that workspace need no Redis command', async () => {
    const ws = await overLimit(t);
    expect((await call(t.service, 'GET', '/ping', { key: ws.apiKey })).status).to.equal(429);
    const commands = ['evalsha', 'eval', 'hmget', 'hgetall', 'exists', 'hset'];
    const before = await calls(t.redis, ...commands);
    for (const path of ['/ping', '/data?userId=p1&key=coins', '/data?userId=p1', '/ping']) {
      expect((await call(t.service, 'GET', path, { key: ws.apiKey })).status, path).to.equal(429);
    }
    const set = await call(t.service, 'POST', '/data/set', { key: ws.apiKey, body: { userId: 'p1', key: 'coins', value: 1 } });
    expect(set.status).to.equal(429);
    expect(set.headers.get('retry-after')).to.match(/^\d+$/);
    expect((await calls(t.redis, ...commands)) - before).to.equal(0);
  });
});

describe('rate limit fast path and the window reset', () => {
  const t = useService({ RATE_LIMIT_FREE: '1', RATE_LIMIT_WINDOW_MS: '400' });

  it('answers again once the window has reset', async () => {
    const ws = await newWorkspace(t.redis, 'free');
    expect((await call(t.service, 'GET', '/ping', { key: ws.apiKey })).status).to.equal(200);
    expect((await call(t.service, 'GET', '/ping', { key: ws.apiKey })).status).to.equal(429);
    expect((await call(t.service, 'GET', '/ping', { key: ws.apiKey })).status).to.equal(429);
    await new Promise((r) => setTimeout(r, 450));
    expect((await call(t.service, 'GET', '/ping', { key: ws.apiKey })).status).to.equal(200);
  });
});
