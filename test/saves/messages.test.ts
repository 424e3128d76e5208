// Messages to players through the HTTP API: sent and listed, handed to the session that holds
// the player (with the acquire's load, then with each save's answer, each once), acknowledged
// by the save that keeps their effect (fenced like its ops), handed again to the next holder
// when the last one never acknowledged them; the limits on what is sent, and the storage
// they are counted in. The acquire's metadata, and many players acquired in one request.
import { expect } from 'chai';
import { keys } from '../../src/store/keys.js';
import { ADMIN_TOKEN, adminCall } from '../support/admin.js';
import { client, newWorkspace, startTestService, useService } from '../support/service.js';

describe('safe saves: messages to players', () => {
  const t = useService({ ADMIN_TOKEN, MESSAGES_MAX_WAITING: '3', MESSAGE_MAX_BYTES: '200', MESSAGE_MAX_TTL_SECONDS: '7200', STORAGE_FLUSH_MS: '50' });
  let api: ReturnType<typeof client>;
  let workspaceId: string;

  beforeEach(async () => {
    const ws = await newWorkspace(t.redis);
    workspaceId = ws.workspaceId;
    api = client(t.service, ws.apiKey);
  });

  const send = async (userId: string | number, message: unknown, extra: Record<string, unknown> = {}) => {
    const res = await api.post('/messages', { userId, message, ...extra });
    expect(res.status, res.text).to.equal(200);
    return res.body.data.messageId as string;
  };
  const waiting = async (userId: string | number) => (await api.get(`/messages?userId=${userId}`)).body.data.messages as Array<{ id: string; message: unknown }>;

  it('leaves a message and lists it, oldest first, with when it was sent and when it stops waiting; reading does not consume', async () => {
    const before = Date.now();
    const res = await api.post('/messages', { userId: 7, message: { gift: 'sword', from: 12 }, ttlSeconds: 3600 });
    expect(res.status).to.equal(200);
    const { messageId, sentAt, expiresAt } = res.body.data;
    expect(messageId).to.match(/^msg_\d{19}$/);
    expect(Date.parse(sentAt)).to.be.within(before - 1000, Date.now() + 1000);
    expect(Date.parse(expiresAt) - Date.parse(sentAt)).to.equal(3_600_000);
    const second = await send(7, 'hello');
    for (let i = 0; i < 2; i++) {
      const list = await api.get('/messages?userId=7');
      expect(list.body).to.deep.equal({
        success: true,
        data: {
          messages: [
            { id: messageId, message: { gift: 'sword', from: 12 }, sentAt, expiresAt },
            { id: second, message: 'hello', sentAt: list.body.data.messages[1].sentAt, expiresAt: list.body.data.messages[1].expiresAt },
          ],
        },
      });
    }
    // The default wait is 30 days (MESSAGE_TTL_SECONDS).
    const [, listed] = await waiting(7);
    expect(listed).to.exist;
  });

  it('refuses what it cannot keep: a missing message, a wait past the most, a message too large, a full inbox, a read key', async () => {
    const missing = await api.post('/messages', { userId: 1 });
    expect([missing.status, missing.body.code]).to.deep.equal([400, 'INVALID_REQUEST']);
    const long = await api.post('/messages', { userId: 1, message: 1, ttlSeconds: 7201 });
    expect([long.status, long.body.error]).to.deep.equal([400, 'Invalid field "ttlSeconds" in body: at most 7200 (MESSAGE_MAX_TTL_SECONDS)']);
    const large = await api.post('/messages', { userId: 1, message: 'x'.repeat(199) });
    expect([large.status, large.body.code]).to.deep.equal([413, 'PAYLOAD_TOO_LARGE']);
    expect(large.body.error).to.include('MESSAGE_MAX_BYTES');
    for (let i = 0; i < 3; i++) await send(1, i);
    const full = await api.post('/messages', { userId: 1, message: 3 });
    expect([full.status, full.body.code]).to.deep.equal([409, 'INBOX_FULL']);
    expect(full.body.error).to.include('3 messages already wait');
    expect((await waiting(1)).map((m) => m.message)).to.deep.equal([0, 1, 2]);
    const created = await adminCall(t.service, 'POST', `/workspaces/${workspaceId}/keys`, { token: ADMIN_TOKEN, body: { label: 'reader', scope: 'read' } });
    const reader = client(t.service, created.body.data.apiKey);
    expect((await reader.post('/messages', { userId: 2, message: 1 })).status).to.equal(403);
    expect((await reader.get('/messages?userId=1')).body.data.messages).to.have.length(3);
    const badAck = await api.post('/data/batch', { userId: 1, ops: [], ackMessages: ['msg_1'] });
    expect([badAck.status, badAck.body.code]).to.deep.equal([400, 'INVALID_REQUEST']);
  });

  it('replays a send with the same Idempotency-Key: one message, the same id', async () => {
    const headers = { 'Idempotency-Key': 'gift-1' };
    const a = await api.post('/messages', { userId: 3, message: { coins: 5 } }, { headers });
    const b = await api.post('/messages', { userId: 3, message: { coins: 5 } }, { headers });
    expect(b.body).to.deep.equal(a.body);
    expect(b.headers.get('idempotent-replayed')).to.equal('true');
    expect(await waiting(3)).to.have.length(1);
  });

  it('hands every waiting message with the load, then each new one once with a save, and removes those a save acknowledges with its ops', async () => {
    const first = await send(5, { coins: 10 });
    const acquired = await api.post('/sessions/acquire', { userId: 5, owner: 'job-A', load: true });
    const sessionId = acquired.body.data.sessionId;
    expect(acquired.body.data.messages.map((m: { id: string }) => m.id)).to.deep.equal([first]);
    expect(acquired.body.data.messages[0].message).to.deep.equal({ coins: 10 });

    // A message arrives while the player is held: the next save hands it over, once.
    const second = await send(5, { coins: 3 });
    const save1 = await api.post('/data/batch', { userId: 5, sessionId, ops: [{ op: 'increment', key: 'coins', amount: 10 }], ackMessages: [first] });
    expect(save1.status).to.equal(200);
    expect(save1.body.data.messages.map((m: { id: string }) => m.id)).to.deep.equal([second]);
    expect((await waiting(5)).map((m) => m.id)).to.deep.equal([second]);
    const save2 = await api.post('/data/batch', { userId: 5, sessionId, ops: [{ op: 'increment', key: 'coins', amount: 3 }], ackMessages: [second] });
    expect(save2.body.data.messages).to.deep.equal([]);
    expect(await waiting(5)).to.deep.equal([]);
    // Acknowledging again (a retried save) is no error.
    const again = await api.post('/data/batch', { userId: 5, sessionId, ops: [], ackMessages: [second] });
    expect(again.status).to.equal(200);
    expect((await api.get('/data?userId=5&key=coins')).body.data.value).to.equal(13);
  });

  it('hands all waiting messages to the first save of a session acquired without load', async () => {
    const a = await send(6, 'a');
    const acquired = await api.post('/sessions/acquire', { userId: 6, owner: 'job-A' });
    expect(acquired.body.data).to.not.have.property('messages');
    const save = await api.post('/data/batch', { userId: 6, sessionId: acquired.body.data.sessionId, ops: [] });
    expect(save.body.data.messages.map((m: { id: string }) => m.id)).to.deep.equal([a]);
    // A write without the session hands nothing (it is not the holder's).
    await api.post('/sessions/release', { userId: 6, sessionId: acquired.body.data.sessionId });
    const plain = await api.post('/data/batch', { userId: 6, ops: [{ op: 'set', key: 'k', value: 1 }] });
    expect(plain.body.data).to.not.have.property('messages');
  });

  it('fences acknowledgements like ops: a stolen session\'s save acknowledges nothing, and the new holder is handed the message', async () => {
    const gift = await send(8, { gems: 1 });
    const a = await api.post('/sessions/acquire', { userId: 8, owner: 'job-A', load: true });
    expect(a.body.data.messages).to.have.length(1);
    // Server A stalls before saving; server B steals the player and is handed the same message.
    const b = await api.post('/sessions/acquire', { userId: 8, owner: 'job-B', load: true, steal: true });
    expect(b.body.data.messages.map((m: { id: string }) => m.id)).to.deep.equal([gift]);
    const late = await api.post('/data/batch', { userId: 8, sessionId: a.body.data.sessionId, ops: [{ op: 'increment', key: 'gems', amount: 1 }], ackMessages: [gift] });
    expect(late.body.code).to.equal('SESSION_LOST');
    expect((await waiting(8)).map((m) => m.id)).to.deep.equal([gift]);
    await api.post('/data/batch', { userId: 8, sessionId: b.body.data.sessionId, release: true, ops: [{ op: 'increment', key: 'gems', amount: 1 }], ackMessages: [gift] });
    expect((await api.get('/data?userId=8&key=gems')).body.data.value).to.equal(1);
    expect(await waiting(8)).to.deep.equal([]);
  });

  it('hands what was not acknowledged to the next session after a release, and drops expired messages', async () => {
    const kept = await send(9, 'kept');
    const old = await send(9, 'old');
    const a = await api.post('/sessions/acquire', { userId: 9, owner: 'job-A', load: true });
    expect(a.body.data.messages).to.have.length(2);
    await api.post('/sessions/release', { userId: 9, sessionId: a.body.data.sessionId });
    expect(await t.redis.hexists(keys.player(workspaceId, '9'), '\0md')).to.equal(0);
    // One of them expires (its stored expiry moved to the past).
    const inbox = keys.playerInbox(workspaceId, '9');
    const stored = (await t.redis.hget(inbox, old))!;
    const [sent, , json] = stored.split('|');
    await t.redis.hset(inbox, old, `${sent}|${Date.now() - 1}|${json}`);
    const b = await api.post('/sessions/acquire', { userId: 9, owner: 'job-B', load: true });
    expect(b.body.data.messages.map((m: { id: string }) => m.id)).to.deep.equal([kept]);
    expect(await t.redis.hexists(inbox, old)).to.equal(0);
  });

  it('answers the player\'s first session time and session count on acquire', async () => {
    const a = await api.post('/sessions/acquire', { userId: 10, owner: 'job-A' });
    expect(a.body.data.metadata.sessionCount).to.equal(1);
    await api.post('/data/batch', { userId: 10, sessionId: a.body.data.sessionId, release: true, ops: [{ op: 'set', key: 'k', value: 1 }] });
    const b = await api.post('/sessions/acquire', { userId: 10, owner: 'job-B' });
    expect(b.body.data.metadata).to.deep.equal({ firstSessionAt: a.body.data.metadata.firstSessionAt, sessionCount: 2 });
    // A renew answers the lease alone.
    const renewed = await api.post('/sessions/renew', { userId: 10, sessionId: b.body.data.sessionId });
    expect(renewed.body.data).to.not.have.property('metadata');
    // A player that never kept data keeps nothing beside it either: released unsaved, it starts again.
    const c = await api.post('/sessions/acquire', { userId: 'new-10', owner: 'job-A' });
    await api.post('/sessions/release', { userId: 'new-10', sessionId: c.body.data.sessionId });
    const d = await api.post('/sessions/acquire', { userId: 'new-10', owner: 'job-A' });
    expect(d.body.data.metadata.sessionCount).to.equal(1);
  });

  it('acquires many players in one request, each on its own, with their data and messages', async () => {
    await api.post('/data/set', { userId: 21, key: 'coins', value: 4 });
    const note = await send(22, 'welcome');
    await api.post('/sessions/acquire', { userId: 23, owner: 'job-X' });
    const res = await api.post('/sessions/acquire', { players: [21, 22, 23], owner: 'job-A', load: true });
    expect(res.status).to.equal(200);
    const [p21, p22, p23] = res.body.data.players;
    expect(p21).to.include({ userId: '21', success: true, version: 1, owner: 'job-A' });
    expect(p21.values).to.deep.equal({ coins: 4 });
    expect(p22.messages.map((m: { id: string }) => m.id)).to.deep.equal([note]);
    expect(p22.sessionId).to.not.equal(p21.sessionId);
    expect(p23).to.include({ userId: '23', success: false, status: 409, code: 'SESSION_LOCKED' });
    // Each session holds its own player.
    const save = await api.post('/data/batch', {
      players: [
        { userId: 21, sessionId: p21.sessionId, ops: [{ op: 'increment', key: 'coins', amount: 1 }] },
        { userId: 22, sessionId: p22.sessionId, ops: [{ op: 'set', key: 'seen', value: true }], ackMessages: [note] },
      ],
    });
    expect(save.body.data.players.map((p: { success: boolean }) => p.success)).to.deep.equal([true, true]);
    expect(await waiting(22)).to.deep.equal([]);
    const twice = await api.post('/sessions/acquire', { players: [1, 1], owner: 'job-A' });
    expect([twice.status, twice.body.error]).to.deep.equal([400, 'Invalid field "players[1]" in body: player 1 appears twice in one request']);
  });

  it('counts waiting messages in the workspace\'s storage until they are acknowledged', async () => {
    const storage = async () => (await adminCall(t.service, 'GET', `/workspaces/${workspaceId}`, { token: ADMIN_TOKEN })).body.data.storage;
    const settled = async (check: (s: { messageBytes: number }) => boolean) => {
      for (let i = 0; i < 100; i++) {
        const s = await storage();
        if (check(s)) return s;
        await new Promise((r) => setTimeout(r, 30));
      }
      throw new Error(`storage never settled: ${JSON.stringify(await storage())}`);
    };
    const id = await send(11, { coins: 1 });
    const stored = await t.redis.hget(keys.playerInbox(workspaceId, '11'), id);
    const sentBytes = id.length + stored!.length;
    await settled((s) => s.messageBytes === sentBytes);
    const a = await api.post('/sessions/acquire', { userId: 11, owner: 'job-A', load: true });
    await api.post('/data/batch', { userId: 11, sessionId: a.body.data.sessionId, ops: [], ackMessages: [id] });
    await settled((s) => s.messageBytes === 0);
  });

  it('hands at most 64 KiB of messages an answer, the rest with the next saves, each once', async () => {
    const t2 = await startTestService({ ADMIN_TOKEN });
    try {
      const ws = await newWorkspace(t.redis);
      const api2 = client(t2, ws.apiKey);
      const big = (i: number) => ({ i, pad: 'x'.repeat(15_000) });
      const ids: string[] = [];
      for (let i = 0; i < 10; i++) ids.push((await api2.post('/messages', { userId: 1, message: big(i) })).body.data.messageId);
      const acquired = await api2.post('/sessions/acquire', { userId: 1, owner: 'job-A', load: true });
      const handed = [acquired.body.data.messages.map((m: { id: string }) => m.id) as string[]];
      const sessionId = acquired.body.data.sessionId;
      while (handed.flat().length < 10) {
        const save = await api2.post('/data/batch', { userId: 1, sessionId, ops: [] });
        const more = save.body.data.messages.map((m: { id: string }) => m.id) as string[];
        expect(more.length, 'every save hands some while some wait unhanded').to.be.greaterThan(0);
        handed.push(more);
      }
      expect(handed.map((h) => h.length)).to.deep.equal([4, 4, 2]);
      expect(handed.flat()).to.deep.equal(ids);
    } finally {
      await t2.close();
    }
  });
});
