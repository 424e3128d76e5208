// Last use of each key: noted in memory per request, written in batches, never moved backwards.
import { expect } from 'chai';
import type { Redis } from 'ioredis';
import { LastUsedRecorder } from '../../src/auth/last-used.js';
import { createLogger } from '../../src/logger.js';
import { KeyUsageStore } from '../../src/store/workspaces/key-usage.js';
import { keys } from '../../src/store/keys.js';
import { testOps } from '../support/admin.js';
import { call, newWorkspace, startTestService, testConfig, testRedis } from '../support/service.js';

describe('last use of API keys', () => {
  let redis: Redis;
  before(() => {
    redis = testRedis();
  });
  after(() => redis.disconnect());

  function recorder(store = new KeyUsageStore(redis)): LastUsedRecorder {
    return new LastUsedRecorder(store, createLogger(testConfig()));
  }

  it('keeps the latest time per key, across calls, flushes and instances', async () => {
    const ws = await newWorkspace(redis);
    const a = recorder();
    const b = recorder();
    a.touch(ws.keyId, ws.workspaceId, 2000);
    a.touch(ws.keyId, ws.workspaceId, 1000);
    expect(a.size).to.equal(1);
    await a.flush();
    expect(a.size).to.equal(0);
    expect(await redis.hget(keys.keyLastUsed(ws.workspaceId), ws.keyId)).to.equal('2000');
    // Another instance reporting an older use does not move the time back.
    b.touch(ws.keyId, ws.workspaceId, 1500);
    await b.flush();
    expect(await redis.hget(keys.keyLastUsed(ws.workspaceId), ws.keyId)).to.equal('2000');
    b.touch(ws.keyId, ws.workspaceId, 3000);
    await b.flush();
    expect(await redis.hget(keys.keyLastUsed(ws.workspaceId), ws.keyId)).to.equal('3000');
  });

  it('writes several workspaces in one batch, and nothing for a workspace that does not exist', async () => {
    const one = await newWorkspace(redis);
    const two = await newWorkspace(redis);
    const r = recorder();
    r.touch(one.keyId, one.workspaceId, 10);
    r.touch(two.keyId, two.workspaceId, 20);
    r.touch('key_ghost', 'ws_ghost_never_created', 30);
    await r.flush();
    expect(await redis.hget(keys.keyLastUsed(one.workspaceId), one.keyId)).to.equal('10');
    expect(await redis.hget(keys.keyLastUsed(two.workspaceId), two.keyId)).to.equal('20');
    expect(await redis.exists(keys.keyLastUsed('ws_ghost_never_created'))).to.equal(0);
  });

  it('keeps what it could not write and writes it on the next flush', async () => {
    const ws = await newWorkspace(redis);
    let fail = true;
    const store = new KeyUsageStore(redis);
    const flaky = Object.assign(Object.create(store) as KeyUsageStore, {
      record: (batch: ReadonlyMap<string, string[]>) => (fail ? Promise.reject(new Error('down')) : store.record(batch)),
    });
    const r = recorder(flaky);
    r.touch(ws.keyId, ws.workspaceId, 500);
    await r.flush();
    expect(r.size).to.equal(1);
    fail = false;
    await r.flush();
    expect(await redis.hget(keys.keyLastUsed(ws.workspaceId), ws.keyId)).to.equal('500');
  });

  it('the service records each authenticated request and writes the rest when it closes', async () => {
    const service = await startTestService({ KEY_LAST_USED_FLUSH_MS: '600000' });
    const ws = await newWorkspace(redis);
    const before = Date.now();
    await call(service, 'GET', '/ping', { key: ws.apiKey });
    // A refused key is not recorded.
    await call(service, 'GET', '/ping', { key: 'pds_' + 'z'.repeat(40) });
    expect(service.lastUsed.size).to.equal(1);
    expect((await testOps(redis).listKeys(ws.workspaceId))[0]!.lastUsedAt).to.equal(null);
    await service.close();
    const view = (await testOps(redis).listKeys(ws.workspaceId))[0]!;
    expect(Date.parse(view.lastUsedAt!)).to.be.within(before, Date.now());
  });
});
