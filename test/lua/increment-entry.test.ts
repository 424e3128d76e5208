import { expect } from 'chai';
import type { Redis } from 'ioredis';
import { keys } from '../../src/store/keys.js';
import { ScriptCode } from '../../src/store/scripts.js';
import { randomId } from '../support/random.js';
import { testRedis } from '../support/service.js';

describe('lua/increment-entry.lua', () => {
  let redis: Redis;
  let hash: string;
  const inc = (field: string, amount: string, dflt = '0', now = '1700000000000', max = '1000') =>
    redis.incrementEntry(hash, field, amount, dflt, now, max);

  before(() => {
    redis = testRedis();
  });
  beforeEach(() => {
    hash = keys.player(randomId('ws'), '1');
  });
  after(() => redis.disconnect());

  it('starts from the default when the entry is missing, and stores [updated_at,value]', async () => {
    expect(await inc('coins', '5', '100', '1700000000123')).to.equal('105');
    expect(await redis.hget(hash, 'coins')).to.equal('[1700000000123,105]');
  });

  it('adds to the stored number and updates the timestamp', async () => {
    await redis.hset(hash, 'coins', '[1,10]');
    expect(await inc('coins', '-3', '0', '1700000000999')).to.equal('7');
    expect(await redis.hget(hash, 'coins')).to.equal('[1700000000999,7]');
  });

  it('keeps fractions exact as JSON numbers (0.5 + 0.25, 0.1 + 0.2)', async () => {
    expect(await inc('a', '0.5')).to.equal('0.5');
    expect(await inc('a', '0.25')).to.equal('0.75');
    expect(await inc('b', '0.1')).to.equal('0.1');
    expect(Number(await inc('b', '0.2'))).to.equal(0.1 + 0.2);
  });

  it('round-trips large and tiny doubles exactly', async () => {
    for (const n of [1e21, 2 ** 53 - 1, -(2 ** 53) + 1, 1.7976931348623157e308, 5e-324, 123456.789e-10]) {
      const field = randomId('f');
      expect(Number(await inc(field, String(n)))).to.equal(n);
    }
  });

  it('refuses a stored value that is not a number and leaves it untouched', async () => {
    for (const stored of ['[1,"12"]', '[1,{"a":1}]', '[1,true]', '[1,[1]]', '[1,"0x10"]', 'garbage', '[1,nan]', '[1, 5]']) {
      await redis.hset(hash, 'v', stored);
      expect(await inc('v', '1'), stored).to.equal(ScriptCode.NOT_A_NUMBER);
      expect(await redis.hget(hash, 'v')).to.equal(stored);
    }
  });

  it('refuses a result outside the finite range and leaves the value untouched', async () => {
    await redis.hset(hash, 'big', '[1,1.7976931348623157e308]');
    expect(await inc('big', '1.7976931348623157e308')).to.equal(ScriptCode.NOT_FINITE);
    expect(await redis.hget(hash, 'big')).to.equal('[1,1.7976931348623157e308]');
  });

  it('refuses a new entry beyond the maximum, but still increments existing ones', async () => {
    await inc('a', '1', '0', '1', '2');
    await inc('b', '1', '0', '1', '2');
    expect(await inc('c', '1', '0', '1', '2')).to.equal(ScriptCode.TOO_MANY_ENTRIES);
    expect(await redis.hexists(hash, 'c')).to.equal(0);
    expect(await inc('a', '1', '0', '1', '2')).to.equal('2');
  });
});
