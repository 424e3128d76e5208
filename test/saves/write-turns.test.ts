// A workspace that sends more writes at once than its turn on storage gets through in time
// (issue 38, item 11): the ones queued too long behind their own workspace's turn answer 429
// RATE_LIMITED with Retry-After, at the workspace's own pace, never a 5xx while Redis answers.
// The turn wait is the command timeout (REDIS_COMMAND_TIMEOUT_MS), set low here so that a
// plan's whole window sent at once outlasts it on any machine.
import { expect } from 'chai';
import { keys } from '../../src/store/keys.js';
import { client, newWorkspace, useService, type ApiResponse } from '../support/service.js';

const WRITES = 300;

describe('writes queued behind their own workspace turn (saves/write-turns.ts)', function () {
  this.timeout(60_000);
  const ctx = useService({ REDIS_COMMAND_TIMEOUT_MS: '300', RATE_LIMIT_PRO: '100000' });

  it(`answers a pro workspace's ${WRITES} writes at once 200 or 429 with Retry-After, never 5xx, with Redis healthy`, async () => {
    const ws = await newWorkspace(ctx.redis, 'pro');
    const api = client(ctx.service, ws.apiKey);
    expect((await api.post('/data/set', { userId: 'warm', key: 'k', value: 1 })).status).to.equal(200);
    // Each a batch of 100 small ops, so that the workspace's queue outlasts the wait.
    const ops = Array.from({ length: 100 }, (_, i) => ({ op: 'set', key: `k${i}`, value: 'v'.repeat(40) }));
    const answers: ApiResponse[] = await Promise.all(
      Array.from({ length: WRITES }, (_, i) => api.post('/data/batch', { userId: `p${i}`, ops })),
    );
    const byStatus = new Map<number, number>();
    for (const res of answers) byStatus.set(res.status, (byStatus.get(res.status) ?? 0) + 1);
    const codes = new Map<string, number>();
    for (const res of answers) if (res.status !== 200) codes.set(res.body?.code, (codes.get(res.body?.code) ?? 0) + 1);
    const summary = JSON.stringify([...byStatus, ...codes]);
    expect([...byStatus.keys()].filter((s) => s >= 500), summary).to.deep.equal([]);
    expect([...byStatus.keys()].every((s) => s === 200 || s === 429), summary).to.equal(true);
    // The queue did outlast the wait (else this test shows nothing): some were refused.
    expect(byStatus.get(429) ?? 0, summary).to.be.greaterThan(0);
    for (const [i, res] of answers.entries()) {
      const written = (await ctx.redis.exists(keys.player(ws.workspaceId, `p${i}`))) === 1;
      if (res.status === 200) {
        expect(written, `p${i}`).to.equal(true);
        continue;
      }
      expect(res.body).to.include({ success: false, code: 'RATE_LIMITED' });
      expect(res.body.error).to.match(/more writes at once/);
      expect(Number(res.headers.get('retry-after'))).to.be.within(1, 30);
      expect(written, `p${i} refused, yet written`).to.equal(false);
    }
  });
});
