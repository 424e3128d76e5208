// The per-workspace byte budget (http/byte-budget.ts): large whole-player answers and large
// bodies are charged to their workspace; past the budget 429 RATE_LIMITED with Retry-After,
// and another workspace's budget is its own. Real Redis, the real HTTP server.
import { expect } from 'chai';
import { ByteBudget, LARGE_BYTES } from '../../src/http/byte-budget.js';
import { AppError } from '../../src/errors.js';
import { keys } from '../../src/store/keys.js';
import { client, newWorkspace, useService } from '../support/service.js';

const RATE = 100_000;
const BURST = 200_000;
const VALUE = 'v'.repeat(150_000);
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe('the byte budget per workspace', () => {
  describe('ByteBudget', () => {
    it('refills at its rate up to its burst, charges only large transfers, and lets an oversize one through when full', () => {
      let now = 0;
      const budget = new ByteBudget(RATE, BURST, () => now);
      budget.charge('a', LARGE_BYTES); // not charged
      budget.charge('a', 150_000);
      let refused: unknown;
      try {
        budget.charge('a', 150_000);
      } catch (err) {
        refused = err;
      }
      expect(refused).to.be.instanceOf(AppError);
      expect((refused as AppError).status).to.equal(429);
      expect((refused as AppError).headers['Retry-After']).to.equal('1');
      budget.charge('b', 150_000); // its own bucket
      now += 1000;
      budget.charge('a', 150_000);
      // Larger than the burst: waits for a full bucket, then passes and leaves a debt.
      now += 10_000;
      budget.charge('a', 500_000);
      expect(() => budget.charge('a', 100_000)).to.throw(AppError);
      expect(() => new ByteBudget(0, BURST, () => now).charge('a', 10_000_000)).not.to.throw();
    });
  });

  describe('over HTTP', () => {
    const t = useService({ WORKSPACE_BYTES_PER_SECOND: String(RATE), MAX_PLAYER_BYTES: String(BURST) });

    it('answers A 429 with Retry-After past its budget while B is served, and B has a budget of its own', async () => {
      const [a, b] = [await newWorkspace(t.redis), await newWorkspace(t.redis)];
      const [apiA, apiB] = [client(t.service, a.apiKey), client(t.service, b.apiKey)];
      expect((await apiA.post('/data/set', { userId: 'big', key: 'k', value: VALUE })).status).to.equal(200);
      expect((await apiB.post('/data/set', { userId: 'big', key: 'k', value: VALUE })).status).to.equal(200);
      await sleep(1700); // both buckets full again

      expect((await apiA.get('/data?userId=big')).status).to.equal(200);
      const refused = await apiA.get('/data?userId=big');
      expect(refused.status).to.equal(429);
      expect(refused.body).to.include({ success: false, code: 'RATE_LIMITED' });
      expect((refused.body as { error: string }).error).to.match(/byte budget/).and.match(/not the plan's request limit/);
      expect(Number(refused.headers.get('retry-after'))).to.be.within(1, 2);
      // A's small reads are not charged.
      expect((await apiA.get('/data?userId=big&key=k')).status).to.equal(200);
      // A large body is refused before it is read, and writes nothing.
      const write = await apiA.post('/data/set', { userId: 'big', key: 'k2', value: VALUE });
      expect(write.status).to.equal(429);
      expect(await t.redis.hexists(keys.player(a.workspaceId, 'big'), 'k2')).to.equal(0);

      // B, on the same instance at the same time: served, twice at most within its own burst.
      expect((await apiB.get('/data?userId=big')).status).to.equal(200);
      expect((await apiB.get('/data?userId=big')).status).to.equal(429);

      await sleep(Number(refused.headers.get('retry-after')) * 1000 + 100);
      expect((await apiA.get('/data?userId=big')).status).to.equal(200);
    });
  });
});
