// The other places a player lives (erasure/places.ts): each erasure calls removePlayer for
// every workspace it erases in, and a place that fails makes the attempt fail, recorded for
// operators, and retried by the worker until it succeeds. A worker of the test's own, with a
// place of the test's own; no service with the digest secret runs meanwhile, so no other worker
// takes the job.
import { expect } from 'chai';
import { ErasureRequests } from '../../src/erasure/requests.js';
import { AuditLogStore } from '../../src/store/installation/audit-log.js';
import { testOps } from '../support/admin.js';
import { ERASURE_ENV, TestPlace, testWorker, freshGameId, freshUserId, keysOfPlayer, waitForJob } from '../support/erasure.js';
import { testConfig, useService } from '../support/service.js';

describe('erasure: other places a player lives, and retries', function () {
  this.timeout(30_000);
  const h = useService({});

  it('calls removePlayer in each workspace; a failing place fails the attempt, which is retried until done', async () => {
    const config = testConfig({ ...ERASURE_ENV, ERASURE_CLAIM_IDLE_MS: '500' });
    const ops = testOps(h.redis, { config });
    const place = new TestPlace('leaderboards (test)', () => true);
    const worker = testWorker(h.redis, config, [place]);
    const userId = freshUserId();
    const spaces = [await ops.createWorkspace({ name: 'places-a' }), await ops.createWorkspace({ name: 'places-b' })];
    for (const ws of spaces) await ops.setPlayerValue(ws.workspaceId, userId, 'score', 10);
    worker.start();
    try {
      // A request naming two games, each served by one of the workspaces, as the webhook makes it.
      const games = spaces.map(() => freshGameId());
      for (const [i, ws] of spaces.entries()) await ops.erasures.setGames(ws.workspaceId, [games[i]!]);
      const requests = new ErasureRequests(h.redis, config.erasure, new AuditLogStore(h.redis, 1000));
      const { job } = await requests.request({ userId: String(userId), scope: { kind: 'games', gameIds: games.map(String) }, source: 'webhook', actor: 'test' });
      const failed = await waitForJob(h.redis, job!.jobId, ['failed']);
      expect(failed['lastError']).to.include('leaderboards (test): board node unavailable');
      expect(Number(failed['nextAttemptAt'])).to.be.greaterThan(Date.now() - 1000);
      expect((await ops.erasures.list({ state: 'failed', limit: 500 })).jobs.map((j) => j.jobId)).to.include(job!.jobId);
      // The keys in the player's slot went in the first attempt; the job is not done until every place is.
      for (const ws of spaces) expect(await keysOfPlayer(h.redis, ws.workspaceId, userId)).to.deep.equal([]);
      place.failing = () => false;
      const done = await waitForJob(h.redis, job!.jobId, ['done'], 10_000);
      expect(Number(done['attempts'])).to.be.at.least(2);
      for (const ws of spaces) expect(place.removed).to.deep.include([ws.workspaceId, String(userId)]);
    } finally {
      await worker.stop();
    }
  });
});
