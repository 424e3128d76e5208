import { expect } from 'chai';
import type { Redis } from 'ioredis';
import { keys } from '../../src/store/keys.js';
import { ScriptCode } from '../../src/store/scripts.js';
import { randomId } from '../support/random.js';
import { testRedis } from '../support/service.js';

describe('lua/set-entry.lua', () => {
  let redis: Redis;
  before(() => {
    redis = testRedis();
  });
  after(() => redis.disconnect());

  it('writes the entry as given', async () => {
    const hash = keys.player(randomId('ws'), 'u');
    expect(await redis.setEntry(hash, 'k', '[5,{"a":1}]', '10')).to.equal(1);
    expect(await redis.hget(hash, 'k')).to.equal('[5,{"a":1}]');
  });

  it('refuses a new key beyond the maximum, allows replacing an existing one', async () => {
    const hash = keys.player(randomId('ws'), 'u');
    expect(await redis.setEntry(hash, 'a', '[1,1]', '2')).to.equal(1);
    expect(await redis.setEntry(hash, 'b', '[1,2]', '2')).to.equal(1);
    expect(await redis.setEntry(hash, 'c', '[1,3]', '2')).to.equal(ScriptCode.TOO_MANY_ENTRIES);
    expect(await redis.setEntry(hash, 'a', '[2,9]', '2')).to.equal(1);
    expect(await redis.hgetall(hash)).to.deep.equal({ a: '[2,9]', b: '[1,2]' });
  });
});
