// A user id searched across every workspace (GET /admin/v1/players/search): workspaces checked
// in id order, at most `limit` a call, continued by `next` until every one is checked; a match
// carries the workspace's name and the player's row; bad input is a 400.
import { expect } from 'chai';
import { ADMIN_TOKEN, adminCall, testOps } from '../support/admin.js';
import { call, useService } from '../support/service.js';
import { randomId } from '../support/random.js';

describe('admin API: a user id searched across workspaces', function () {
  this.timeout(30_000);
  const h = useService({ ADMIN_TOKEN });

  interface Answer {
    userId: string;
    checked: number;
    workspaces: number;
    next: string | null;
    matches: Array<{ workspaceId: string; name: string; version: number; keys: number | null; session: { owner: string } | null }>;
  }
  const search = async (query: string) => {
    const res = await adminCall(h.service, 'GET', `/players/search?${query}`);
    expect(res.status, JSON.stringify(res.body)).to.equal(200);
    return res.body.data as Answer;
  };

  it('finds the workspaces holding a player, a bounded page of workspaces a call', async () => {
    const ops = testOps(h.redis);
    const made = await Promise.all([0, 1, 2, 3, 4].map((i) => ops.createWorkspace({ name: `search-${i}-${randomId()}` })));
    const userId = `wanted-${randomId()}`;
    for (const ws of [made[1]!, made[3]!]) {
      expect((await call(h.service, 'POST', '/data/set', { key: ws.apiKey, body: { userId, key: 'coins', value: 3 } })).status).to.equal(200);
    }
    await call(h.service, 'POST', '/sessions/acquire', { key: made[3]!.apiKey, body: { userId, owner: 'job-3' } });
    // Another player in a third workspace is no match.
    await call(h.service, 'POST', '/data/set', { key: made[0]!.apiKey, body: { userId: `${userId}-not`, key: 'coins', value: 1 } });

    const found: Answer['matches'] = [];
    let cursor: string | null = null;
    let checked = 0;
    let calls = 0;
    do {
      const page: Answer = await search(`userId=${userId}&limit=2${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`);
      expect(page.checked).to.be.at.most(2);
      checked += page.checked;
      found.push(...page.matches);
      cursor = page.next;
      calls++;
    } while (cursor !== null && calls < 100);
    const total = (await search(`userId=${userId}&limit=500`)).workspaces;
    expect(checked).to.equal(total);
    expect(calls).to.equal(Math.ceil(total / 2));
    expect(found.map((m) => m.workspaceId).sort()).to.deep.equal([made[1]!.workspaceId, made[3]!.workspaceId].sort());
    const held = found.find((m) => m.workspaceId === made[3]!.workspaceId)!;
    expect(held).to.include({ name: made[3]!.name, keys: 1 });
    expect(held.version).to.be.greaterThan(0);
    expect(held.session).to.deep.include({ owner: 'job-3' });
    expect(found.find((m) => m.workspaceId === made[1]!.workspaceId)!.session).to.equal(null);
  });

  it('refuses a bad user id or limit with a 400', async () => {
    for (const query of ['', 'userId=has%20space', 'userId=a&limit=0', 'userId=a&limit=501', `userId=${'x'.repeat(65)}`]) {
      const res = await adminCall(h.service, 'GET', `/players/search?${query}`);
      expect(res.status, query).to.equal(400);
      expect(res.body).to.include({ success: false });
    }
  });
});
