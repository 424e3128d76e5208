// The players list's scripts on their own: index-players keeps the latest write, drops a player
// only when no later write is known, and writes nothing for a deleted workspace;
// player-last-write reads a player's latest updated_at without its values leaving Redis.
import { expect } from 'chai';
import type { Redis } from 'ioredis';
import { encodeEntry } from '../../src/domain/entry.js';
import { keys } from '../../src/store/keys.js';
import { randomId } from '../support/random.js';
import { testRedis } from '../support/service.js';

describe('lua/index-players.lua', () => {
  let redis: Redis;
  before(() => {
    redis = testRedis();
  });
  after(() => redis.disconnect());

  it('keeps the latest time reported by any instance, and ignores a removal older than a write', async () => {
    const ws = randomId('ws');
    await redis.hset(keys.workspace(ws), 'id', ws);
    const index = (...pairs: string[]) => redis.indexPlayers(keys.workspace(ws), keys.workspacePlayers(ws), ...pairs);
    expect(await index('a', '200', 'b', '100')).to.equal(2);
    expect(await index('a', '150')).to.equal(0); // an older report of a
    expect(await redis.zscore(keys.workspacePlayers(ws), 'a')).to.equal('200');
    expect(await index('a', '-180')).to.equal(0); // deleted before its last known write
    expect(await index('b', '-120')).to.equal(1);
    expect(await redis.zrange(keys.workspacePlayers(ws), '0', '-1')).to.deep.equal(['a']);
    expect(await index('c', '-50')).to.equal(0); // a removal of a player never listed
  });

  it('adds a run of writes in a few ZADDs, not one a player, with removals still in their place', async () => {
    // The list sits in the workspace's slot: one ZADD a written player made that master the
    // busiest of a cluster (test-long/fleet). The outcome and the count are a ZADD's a pair.
    const ws = randomId('ws');
    await redis.hset(keys.workspace(ws), 'id', ws);
    const list = keys.workspacePlayers(ws);
    await redis.zadd(list, '500', 'p0', '500', 'p1');
    const pairs: string[] = [];
    for (let i = 0; i < 1200; i++) pairs.push(`p${i}`, String(1000 + i));
    // p0 written at 1000 then removed at 900 (a removal older than a write: ignored); p1 removed
    // at 1100 after its write at 1001 (applied), then written again at 1050 (an older write after
    // the removal, in order: listed again); p2 reported twice (counted twice, kept at the latest).
    pairs.push('p0', '-900', 'p1', '-1100', 'p1', '1050', 'p2', '2000');
    const zadds = async () => Number(/cmdstat_zadd:calls=(\d+)/.exec(await redis.info('commandstats'))?.[1] ?? 0);
    const before = await zadds();
    expect(await redis.indexPlayers(keys.workspace(ws), list, ...pairs)).to.equal(1200 + 1 + 1 + 1);
    expect((await zadds()) - before).to.be.at.most(4);
    expect(await redis.zcard(list)).to.equal(1200);
    expect(await redis.zscore(list, 'p0')).to.equal('1000');
    expect(await redis.zscore(list, 'p1')).to.equal('1050');
    expect(await redis.zscore(list, 'p2')).to.equal('2000');
    expect(await redis.zscore(list, 'p1199')).to.equal('2199');
  });

  it('writes nothing once the workspace is gone', async () => {
    const ws = randomId('ws');
    expect(await redis.indexPlayers(keys.workspace(ws), keys.workspacePlayers(ws), 'a', '1')).to.equal(-1);
    expect(await redis.exists(keys.workspacePlayers(ws))).to.equal(0);
  });
});

describe('lua/player-last-write.lua', () => {
  let redis: Redis;
  before(() => {
    redis = testRedis();
  });
  after(() => redis.disconnect());

  it("answers the latest updated_at of the player's data keys, never a meta field's", async () => {
    const player = keys.player(randomId('ws'), 'u1');
    await redis.hset(player, 'coins', encodeEntry('1', 1000), 'level', encodeEntry('[3,4]', 5000), '\0v', '7', '\0r', '[9999999,1]');
    expect(await redis.playerLastWrite(player)).to.equal(5000);
    expect(await redis.playerLastWrite(keys.player(randomId('ws'), 'none'))).to.equal(-1);
  });
});
