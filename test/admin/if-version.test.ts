// The admin API's conditional player writes: ifVersion on PUT and DELETE, as the operator
// console uses them so that a support person never overwrites a game server's newer save.
import { expect } from 'chai';
import { ADMIN_TOKEN, adminCall } from '../support/admin.js';
import { call, newWorkspace, useService } from '../support/service.js';

describe('admin player writes with ifVersion', () => {
  const h = useService({ ADMIN_TOKEN });

  it('writes at the version read, and refuses with VERSION_CONFLICT (writing nothing) once a game wrote in between', async () => {
    const ws = await newWorkspace(h.redis);
    const player = `/workspaces/${ws.workspaceId}/players/7`;
    await call(h.service, 'POST', '/data/set', { key: ws.apiKey, body: { userId: 7, key: 'coins', value: 1 } });
    const read = await adminCall(h.service, 'GET', player);
    const version = read.body.data.version as number;
    expect(version).to.be.a('number');

    const ok = await adminCall(h.service, 'PUT', player, { body: { key: 'coins', value: 2, ifVersion: version } });
    expect(ok.status).to.equal(200);
    expect(ok.body.data.version).to.equal(version + 1);

    await call(h.service, 'POST', '/data/set', { key: ws.apiKey, body: { userId: 7, key: 'coins', value: 100 } });
    const stale = await adminCall(h.service, 'PUT', player, { body: { key: 'coins', value: 3, ifVersion: version + 1 } });
    expect(stale.status).to.equal(409);
    expect(stale.body).to.include({ code: 'VERSION_CONFLICT', version: version + 2 });
    const staleDelete = await adminCall(h.service, 'DELETE', `${player}?key=coins&ifVersion=${version + 1}`);
    expect(staleDelete.status).to.equal(409);
    expect(staleDelete.body.code).to.equal('VERSION_CONFLICT');
    expect((await adminCall(h.service, 'GET', `${player}?key=coins`)).body.data.value).to.equal(100);

    const deleted = await adminCall(h.service, 'DELETE', `${player}?key=coins&ifVersion=${version + 2}`);
    expect(deleted.body.data).to.deep.equal({ deleted: 1, version: version + 3 });
  });

  it('refuses an ifVersion that is not a whole number', async () => {
    const ws = await newWorkspace(h.redis);
    const player = `/workspaces/${ws.workspaceId}/players/7`;
    expect((await adminCall(h.service, 'PUT', player, { body: { key: 'a', value: 1, ifVersion: -1 } })).status).to.equal(400);
    expect((await adminCall(h.service, 'DELETE', `${player}?ifVersion=x`)).status).to.equal(400);
  });
});
