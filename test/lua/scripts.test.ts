// Every Lua script is pinned by SHA1, so an edit to a script is always deliberate: update the
// pin together with the tests of the changed behaviour.
import { expect } from 'chai';
import type { Redis } from 'ioredis';
import { SCRIPTS, preloadScripts, scriptsLoaded } from '../../src/store/scripts.js';
import { testRedis } from '../support/service.js';

const PINNED: Record<string, string> = {
  'write-player.lua': '3e59123a700f400a022b31f3a86de722c5064c89',
  'player-session.lua': '12b20da4340f58a2f6347351a701d0d5986fe423',
  'read-player.lua': '2e05401442b229454a66c48538db641e527a18d7',
  'rate-limit.lua': '090e1f04f7423e3c33dd9b18a889fcfd5ea7988e',
  'usage-add.lua': '78b42708355679991e83b1256cb2f68909bf2c90',
  'touch-keys.lua': '5a9558d0d8f1d2f542e40384a70a06df727c2fdd',
  'hset-existing.lua': '26c6828835cb91bb7e3147e3ffc70a578d2dc09d',
};

describe('lua scripts', () => {
  let redis: Redis;
  before(() => {
    redis = testRedis();
  });
  after(() => redis.disconnect());

  it('are pinned by SHA1', () => {
    expect(Object.fromEntries(SCRIPTS.map((s) => [s.file, s.sha1]))).to.deep.equal(PINNED);
  });

  it('each open with a header naming KEYS, ARGV and the output', () => {
    for (const script of SCRIPTS) {
      expect(script.lua.startsWith('--[['), script.file).to.equal(true);
      for (let i = 1; i <= script.numberOfKeys; i++) expect(script.lua, script.file).to.include(`KEYS[${i}]`);
      expect(script.lua, script.file).to.match(/Output:/);
    }
  });

  it('load into Redis under the pinned SHA1', async () => {
    await preloadScripts(redis);
    expect(await scriptsLoaded(redis)).to.equal(true);
    for (const script of SCRIPTS) {
      expect(await redis.script('LOAD', script.lua)).to.equal(script.sha1);
    }
  });
});
