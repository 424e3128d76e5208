// GET /players: the workspace's players in pages, by prefix and holding a data key, with players
// that have no data left out (store/workspaces/player-pages.ts).
import { expect } from 'chai';
import { keys } from '../../src/store/keys.js';
import { PAGE_CHECK_BUDGET, PLAYERS_PAGE_MAX } from '../../src/store/workspaces/player-pages.js';
import { testOps } from '../support/admin.js';
import { client, newWorkspace, useService } from '../support/service.js';

type Api = ReturnType<typeof client>;

/** Writes `ops` to every player of `ids`, 100 players a request. */
async function writeAll(api: Api, ids: readonly string[], ops: (id: string) => unknown[]): Promise<void> {
  for (let i = 0; i < ids.length; i += 100) {
    const res = await api.post('/data/batch', { players: ids.slice(i, i + 100).map((userId) => ({ userId, ops: ops(userId) })) });
    expect(res.status, res.text).to.equal(200);
  }
}

/** Every page of a walk: the user ids in the order given, and the size of each page. */
async function walk(api: Api, query: string): Promise<{ ids: string[]; sizes: number[] }> {
  const ids: string[] = [];
  const sizes: number[] = [];
  let cursor: string | null = null;
  for (let pages = 0; pages < 1000; pages++) {
    const res = await api.get(`/players?${query}${cursor === null ? '' : `&cursor=${encodeURIComponent(cursor)}`}`);
    expect(res.status, res.text).to.equal(200);
    ids.push(...res.body.data.players.map((p: { userId: string }) => p.userId));
    sizes.push(res.body.data.players.length);
    cursor = res.body.data.next;
    if (cursor === null) return { ids, sizes };
  }
  throw new Error('the walk never ended');
}

describe('GET /players', () => {
  const t = useService();
  let api: Api;
  let workspaceId: string;
  const flush = () => t.service.playerIndex.flush();

  beforeEach(async () => {
    const ws = await newWorkspace(t.redis);
    workspaceId = ws.workspaceId;
    api = client(t.service, ws.apiKey);
  });

  it('pages through every player exactly once, at most `limit` a page, a large list (a hash table) and a small one (a listpack)', async () => {
    const many = Array.from({ length: 300 }, (_, i) => `p${i}`);
    await writeAll(api, many, (id) => [{ op: 'set', key: 'coins', value: id.length }]);
    await flush();
    const large = await walk(api, 'limit=7');
    expect([...large.ids].sort()).to.deep.equal([...many].sort());
    expect(new Set(large.ids).size, 'no player twice').to.equal(many.length);
    expect(Math.max(...large.sizes)).to.equal(7);
    const first = await api.get('/players');
    expect(first.body.data.players).to.have.length(100);
    expect(first.body.data.players[0]).to.have.keys(['userId', 'lastWriteAt']);

    const other = client(t.service, (await newWorkspace(t.redis)).apiKey);
    await writeAll(other, ['b', 'a', 'd', 'c', 'e'], () => [{ op: 'set', key: 'k', value: 1 }]);
    await flush();
    const small = await walk(other, 'limit=2');
    expect(small.ids).to.deep.equal(['a', 'b', 'c', 'd', 'e']);
    expect(small.sizes).to.deep.equal([2, 2, 1]);
  });

  it('filters by user id prefix and by a data key held, together, and goes on from a page ended inside a reply', async () => {
    const ids = Array.from({ length: 250 }, (_, i) => String(i));
    // Every 10th player holds the data store's key "shop/Wallet #1" (a name with characters to escape).
    await writeAll(api, ids, (id) => [{ op: 'set', key: Number(id) % 10 === 0 ? 'shop/Wallet #1' : 'other', value: 1 }]);
    await flush();
    const key = encodeURIComponent('shop/Wallet #1');
    const holders = await walk(api, `hasKey=${key}&limit=3`);
    expect([...holders.ids].sort()).to.deep.equal(ids.filter((id) => Number(id) % 10 === 0).sort());
    expect(Math.max(...holders.sizes)).to.be.at.most(3);
    const prefixed = await walk(api, 'prefix=1&limit=4');
    expect([...prefixed.ids].sort()).to.deep.equal(ids.filter((id) => id.startsWith('1')).sort());
    const both = await walk(api, `prefix=2&hasKey=${key}`);
    expect([...both.ids].sort()).to.deep.equal(['20', '200', '210', '220', '230', '240']);
    expect((await walk(api, 'hasKey=nobody')).ids).to.deep.equal([]);
  });

  it(`checks at most ${PAGE_CHECK_BUDGET} players a page: a key held by one player of ${PAGE_CHECK_BUDGET + 100} takes two pages`, async () => {
    const ids = Array.from({ length: PAGE_CHECK_BUDGET + 100 }, (_, i) => `q${i}`);
    await writeAll(api, ids, (id) => [{ op: 'set', key: id === 'q1234' ? 'rare' : 'common', value: 1 }]);
    await flush();
    const rare = await walk(api, 'hasKey=rare');
    expect(rare.ids).to.deep.equal(['q1234']);
    expect(rare.sizes, 'the first page stopped at the budget, below its limit').to.have.length(2);
  });

  it('never lists a player whose data was deleted entirely or whose hash is gone (erased), even while the list still names it', async () => {
    await writeAll(api, ['1', '2', '3', '4'], () => [{ op: 'set', key: 'k', value: 1 }]);
    await flush();
    // The list names all four; 2 loses its data (its hash keeps the version), 3 its hash (as an
    // erasure leaves the list until it takes the player off).
    expect((await api.post('/data/delete', { userId: 2 })).status).to.equal(200);
    await t.redis.del(keys.player(workspaceId, '3'));
    expect(await t.redis.zrange(keys.workspacePlayers(workspaceId), '0', '-1')).to.have.members(['1', '2', '3', '4']);
    expect((await walk(api, 'limit=1')).ids).to.deep.equal(['1', '4']);
    expect((await walk(api, 'hasKey=k')).ids).to.deep.equal(['1', '4']);
  });

  it("lists only its own workspace's players, to a read-scoped key too, counted against the plan", async () => {
    const mine = ['1', '2', 'shared'];
    await writeAll(api, mine, () => [{ op: 'set', key: 'k', value: 1 }]);
    const other = client(t.service, (await newWorkspace(t.redis)).apiKey);
    await writeAll(other, ['shared', '3', '10'], () => [{ op: 'set', key: 'k', value: 2 }]);
    await flush();
    const { apiKey } = await testOps(t.redis).createKey(workspaceId, { scope: 'read' });
    const reader = client(t.service, apiKey);
    expect((await walk(reader, 'hasKey=k')).ids).to.deep.equal(['1', '2', 'shared']);
    expect((await walk(reader, 'prefix=1')).ids).to.deep.equal(['1']);
    const res = await reader.get('/players');
    expect(res.headers.get('x-ratelimit-limit')).to.equal('300');
    expect(Number(res.headers.get('x-ratelimit-remaining'))).to.be.below(300);
    expect((await walk(other, 'limit=1')).ids).to.deep.equal(['10', '3', 'shared']);
  });

  it('answers 400 for a limit out of 1-1000, a bad cursor, prefix or key, an unknown field; 401 without a key', async () => {
    for (const query of ['limit=0', `limit=${PLAYERS_PAGE_MAX + 1}`, 'limit=abc', 'limit=-1', 'cursor=abc', 'cursor=0:0:', 'cursor=0:5000:', 'cursor=18446744073709551616:100:', 'cursor=99999999999999999999:100:', 'prefix=a*', 'prefix=', `prefix=${'a'.repeat(65)}`, 'hasKey=', `hasKey=a%01b`, `hasKey=${'k'.repeat(129)}`, 'sort=asc', 'limit=5&limit=6']) {
      const res = await api.get(`/players?${query}`);
      expect(res.status, query).to.equal(400);
      expect(res.body, query).to.include({ success: false, code: 'INVALID_REQUEST' });
    }
    expect((await api.get(`/players?limit=${PLAYERS_PAGE_MAX}`)).status).to.equal(200);
    expect((await client(t.service, '').get('/players')).status).to.equal(401);
  });
});
