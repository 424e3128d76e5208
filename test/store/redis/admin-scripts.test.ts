// The admin side's Lua scripts on their own: touch-keys keeps the latest time and writes
// nothing for a deleted workspace; hset-existing never brings back a deleted record.
import { expect } from 'chai';
import type { Redis } from 'ioredis';
import { keys } from '../../../src/store/keys.js';
import { newWorkspace, testRedis } from '../../support/service.js';

describe('lua/touch-keys.lua', () => {
  let redis: Redis;
  before(() => {
    redis = testRedis();
  });
  after(() => redis.disconnect());

  it('moves times forward only and returns how many moved', async () => {
    const ws = await newWorkspace(redis);
    const meta = keys.workspace(ws.workspaceId);
    const hash = keys.keyLastUsed(ws.workspaceId);
    expect(await redis.touchKeys(meta, hash, 'key_a', '100', 'key_b', '200')).to.equal(2);
    expect(await redis.touchKeys(meta, hash, 'key_a', '50', 'key_b', '300')).to.equal(1);
    expect(await redis.touchKeys(meta, hash, 'key_a', '100')).to.equal(0);
    expect(await redis.hgetall(hash)).to.deep.equal({ key_a: '100', key_b: '300' });
  });

  it('returns -1 and writes nothing when the workspace record does not exist', async () => {
    const id = `ws_gone_${Date.now()}`;
    expect(await redis.touchKeys(keys.workspace(id), keys.keyLastUsed(id), 'key_a', '1')).to.equal(-1);
    expect(await redis.exists(keys.keyLastUsed(id))).to.equal(0);
  });
});

describe('lua/hset-existing.lua', () => {
  let redis: Redis;
  before(() => {
    redis = testRedis();
  });
  after(() => redis.disconnect());

  it('updates the fields of an existing hash and returns 1', async () => {
    const ws = await newWorkspace(redis, 'free');
    expect(await redis.hsetExisting(keys.workspace(ws.workspaceId), 'plan', 'pro', 'name', 'N')).to.equal(1);
    expect(await redis.hmget(keys.workspace(ws.workspaceId), 'plan', 'name', 'id')).to.deep.equal(['pro', 'N', ws.workspaceId]);
  });

  it('returns 0 and creates nothing when the hash is gone', async () => {
    const key = keys.workspace(`ws_gone_${Date.now()}`);
    expect(await redis.hsetExisting(key, 'plan', 'pro')).to.equal(0);
    expect(await redis.exists(key)).to.equal(0);
  });
});
