// The TypeScript client's listPlayers (clients/typescript, imported from source) against the real
// service's GET /players: pages by prefix and holding a key, until `next` is null.
import { expect } from 'chai';
import { PlayerDataClient, PlayerDataError } from '../../clients/typescript/src/index.js';
import { newWorkspace, useService } from '../support/service.js';

describe('TypeScript client: listPlayers (against the service)', () => {
  const t = useService();

  it('pages the players holding a key, by prefix, and passes the 400 of a bad limit on', async () => {
    const ws = await newWorkspace(t.redis);
    const client = new PlayerDataClient({ baseUrl: t.service.baseUrl, apiKey: ws.apiKey, retry: { baseDelayMs: 5 } });
    await client.batchPlayers(['7', '70', '71', '8'].map((userId) => ({ userId, ops: [{ op: 'set', key: userId === '71' ? 'other' : 'shop/Wallet', value: 1 }] })));
    await t.service.playerIndex.flush();
    const seen: string[] = [];
    let cursor: string | undefined;
    for (let pages = 0; pages < 10; pages++) {
      const page = await client.listPlayers({ prefix: '7', hasKey: 'shop/Wallet', limit: 1, cursor });
      expect(page.players.length).to.be.at.most(1);
      seen.push(...page.players.map((p) => p.userId));
      if (page.next === null) break;
      cursor = page.next;
    }
    expect(seen.sort()).to.deep.equal(['7', '70']);
    expect((await client.listPlayers()).players.map((p) => p.userId).sort()).to.deep.equal(['7', '70', '71', '8']);
    const refused = await client.listPlayers({ limit: 5000 }).then(() => undefined, (err: unknown) => err);
    expect(refused).to.be.instanceOf(PlayerDataError);
    expect((refused as PlayerDataError).code).to.equal('INVALID_REQUEST');
  });
});
