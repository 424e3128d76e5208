// The estimate of what players' data costs in Redis (src/store/players/redis-memory.ts), held
// within ±20% of MEMORY USAGE on players of typical shapes written through the service: small
// values, many keys, large values. The counted bytes alone are not (a one-key player: 0.2x).
import { expect } from 'chai';
import { keys } from '../../../src/store/keys.js';
import { estimatedRedisBytes } from '../../../src/store/players/redis-memory.js';
import { client, newWorkspace, useService } from '../../support/service.js';

/** [players' shape, keys, value length]: JSON strings of that many characters. */
const SHAPES: ReadonlyArray<readonly [string, number, number]> = [
  ['one small key', 1, 10],
  ['20 small keys', 20, 10],
  ['20 keys of 100 B', 20, 100],
  ['100 keys of 20 B', 100, 20],
  ['1000 keys of 100 B', 1000, 100],
  ['3 keys of 2 KB', 3, 2000],
  ['50 keys of 5 KB', 50, 5000],
  ['5 keys of 50 KB', 5, 50_000],
  ['1 key of 500 KB', 1, 500_000],
];

describe('store: the Redis memory of players\' data, estimated from the counted bytes', function () {
  this.timeout(30_000);
  const h = useService({ HISTORY_MAX_VERSIONS: '0' });

  it('is within ±20% of MEMORY USAGE for small values, many keys and large values', async () => {
    const ws = await newWorkspace(h.redis, 'pro');
    const api = client(h.service, ws.apiKey);
    const rows: string[] = [];
    let worstCounted = Infinity;
    for (const [shape, count, length] of SHAPES) {
      const userId = shape.replace(/\W+/g, '-');
      for (let first = 0; first < count; first += 100) {
        const ops = [];
        for (let i = first; i < Math.min(count, first + 100); i++) ops.push({ op: 'set', key: `key_${i}`, value: 'v'.repeat(length) });
        expect((await api.post('/data/batch', { players: [{ userId, ops }] })).status).to.equal(200);
      }
      const hash = keys.player(ws.workspaceId, userId);
      const counted = Number(await h.redis.hget(hash, '\0b'));
      const memory = Number(await h.redis.call('MEMORY', 'USAGE', hash, 'SAMPLES', '0'));
      const ratio = estimatedRedisBytes(counted, 1) / memory;
      worstCounted = Math.min(worstCounted, counted / memory);
      rows.push(`${shape}: counted ${counted}, MEMORY USAGE ${memory}, estimate/memory ${ratio.toFixed(2)}`);
      expect(ratio, rows.join('\n')).to.be.within(0.8, 1.2);
    }
    // The counted bytes alone fall far outside ±20% for a small player: the estimate is what makes it hold.
    expect(worstCounted).to.be.below(0.8);
  });
});
