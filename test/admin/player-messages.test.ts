// A player's waiting messages on the admin API: listed (audited as a read), left by an operator
// under the same limits as a game server's, deleted one or all; storage totals follow at once.
import { expect } from 'chai';
import { readStorageTotals } from '../../src/store/workspaces/storage-usage.js';
import { ADMIN_TOKEN, adminCall } from '../support/admin.js';
import { client, newWorkspace, useService } from '../support/service.js';

describe('admin API: a player\'s messages', () => {
  const t = useService({ ADMIN_TOKEN, MESSAGES_MAX_WAITING: '2', MESSAGE_MAX_BYTES: '100' });

  it('lists, sends, and deletes one or all, with the audit trail and the storage totals', async () => {
    const ws = await newWorkspace(t.redis);
    const api = client(t.service, ws.apiKey);
    const base = `/workspaces/${ws.workspaceId}/players/77/messages`;
    expect((await adminCall(t.service, 'GET', base)).body.data).to.deep.equal({ userId: '77', messages: [] });

    const sent = await adminCall(t.service, 'POST', base, { body: { message: { gift: 'crown' }, ttlSeconds: 600 } });
    expect(sent.status).to.equal(200);
    const { messageId, sentAt, expiresAt } = sent.body.data;
    expect(Date.parse(expiresAt) - Date.parse(sentAt)).to.equal(600_000);
    // A game server's session is handed it like any other message.
    const session = await api.post('/sessions/acquire', { userId: 77, owner: 'job-A', load: true });
    expect(session.body.data.messages).to.deep.equal([{ id: messageId, message: { gift: 'crown' }, sentAt }]);
    expect((await readStorageTotals(t.redis, ws.workspaceId)).messageBytes).to.be.greaterThan(0);

    await adminCall(t.service, 'POST', base, { body: { message: 2 } });
    const full = await adminCall(t.service, 'POST', base, { body: { message: 3 } });
    expect([full.status, full.body.code]).to.deep.equal([409, 'INBOX_FULL']);
    const large = await adminCall(t.service, 'POST', base, { body: { message: 'x'.repeat(100) } });
    expect([large.status, large.body.code]).to.deep.equal([413, 'PAYLOAD_TOO_LARGE']);
    const bad = await adminCall(t.service, 'POST', base, { body: { message: 1, ttlSeconds: 10 } });
    expect(bad.status).to.equal(400);

    const listed = await adminCall(t.service, 'GET', base);
    expect(listed.body.data.messages.map((m: { message: unknown }) => m.message)).to.deep.equal([{ gift: 'crown' }, 2]);
    expect((await adminCall(t.service, 'DELETE', `${base}?id=${messageId}`)).body.data).to.deep.equal({ userId: '77', deleted: 1 });
    expect((await adminCall(t.service, 'DELETE', `${base}?id=${messageId}`)).body.data.deleted).to.equal(0);
    expect((await adminCall(t.service, 'DELETE', `${base}?id=nope`)).status).to.equal(400);
    expect((await adminCall(t.service, 'DELETE', base)).body.data.deleted).to.equal(1);
    expect((await readStorageTotals(t.redis, ws.workspaceId)).messageBytes).to.equal(0);

    const audit = await adminCall(t.service, 'GET', `/audit?workspace=${ws.workspaceId}`);
    const actions = audit.body.data.map((e: { action: string }) => e.action);
    expect(actions).to.include.members(['player.message', 'player.messages.view', 'player.messages.delete']);
    // The message itself never reaches the audit trail.
    expect(audit.text).to.not.include('crown');
    expect((await adminCall(t.service, 'GET', '/workspaces/ws_nope/players/1/messages')).status).to.equal(404);
  });
});
