// lua/send-message.lua and lua/includes/inbox.lua, called as the store calls them: ids that sort
// as the messages were sent, the stored form, the inbox's expiry, expired messages dropped on
// the way, the most waiting, and the idempotency prologue.
import { expect } from 'chai';
import type { Redis } from 'ioredis';
import { keys } from '../../src/store/keys.js';
import { PlayerMessagesStore } from '../../src/store/players/player-messages.js';
import { MESSAGE_ID } from '../../src/store/players/script-protocol.js';
import { randomId } from '../support/random.js';
import { testRedis } from '../support/service.js';

describe('lua/send-message.lua', () => {
  let redis: Redis;
  let store: PlayerMessagesStore;
  let ws: string;
  before(() => {
    redis = testRedis();
    store = new PlayerMessagesStore(redis, 60);
  });
  beforeEach(() => {
    ws = randomId('ws');
  });
  after(() => redis.disconnect());

  const send = (json: string, opts: { ttlMs?: number; maxWaiting?: number; idempotency?: { keyHash: string; fingerprint: string } } = {}) =>
    store.send(ws, 'u1', { json, ttlMs: opts.ttlMs ?? 60_000, maxWaiting: opts.maxWaiting ?? 10 }, opts.idempotency);
  const sent = async (json: string, opts: Parameters<typeof send>[1] = {}) => {
    const { reply } = await send(json, opts);
    if (!reply.sent) throw new Error(`refused: ${JSON.stringify(reply.refusal)}`);
    return reply;
  };

  it('stores `<sent>|<expires>|<JSON>` under ids that sort as sent, and expires the inbox a minute after its last message', async () => {
    const a = await sent('{"gift":1}', { ttlMs: 120_000 });
    const b = await sent('[1,2]', { ttlMs: 60_000 });
    const c = await sent('"x"', { ttlMs: 60_000 });
    for (const m of [a, b, c]) expect(m.id).to.match(MESSAGE_ID);
    expect(a.id < b.id && b.id < c.id, 'ids sort as the messages were sent').to.equal(true);
    const inbox = keys.playerInbox(ws, 'u1');
    expect(await redis.hget(inbox, a.id)).to.equal(`${a.sentAtMs}|${a.expiresAtMs}|{"gift":1}`);
    expect(a.expiresAtMs - a.sentAtMs).to.equal(120_000);
    expect(a.bytes).to.equal(a.id.length + `${a.sentAtMs}|${a.expiresAtMs}|{"gift":1}`.length);
    // The latest expiry decides, not the last message sent.
    const expiry = await redis.pexpiretime(inbox);
    expect(expiry).to.equal(a.expiresAtMs + 60_000);
    expect((await store.list(ws, 'u1')).map((m) => [m.id, m.messageJson])).to.deep.equal([
      [a.id, '{"gift":1}'],
      [b.id, '[1,2]'],
      [c.id, '"x"'],
    ]);
  });

  it('refuses past the most waiting (-10, with how many wait), counting only live messages, and drops expired ones on the way', async () => {
    await sent('1', { ttlMs: 1 });
    await sent('2', { ttlMs: 1 });
    await new Promise((r) => setTimeout(r, 5));
    // The two expired ones do not count against the limit of 2, and are dropped.
    await sent('3', { maxWaiting: 2 });
    await sent('4', { maxWaiting: 2 });
    const full = await send('5', { maxWaiting: 2 });
    expect(full.reply).to.deep.equal({ sent: false, refusal: { code: 'INBOX_FULL', waiting: 2 } });
    const stored = Object.keys(await redis.hgetall(keys.playerInbox(ws, 'u1'))).filter((f) => f !== '#');
    expect(stored).to.have.length(2);
    expect((await store.list(ws, 'u1')).map((m) => m.messageJson)).to.deep.equal(['3', '4']);
  });

  it('replays a kept answer for the same fingerprint, sending nothing more, and refuses another (-8)', async () => {
    const idem = { keyHash: 'h1', fingerprint: 'fp1' };
    const first = await send('{"a":1}', { idempotency: idem });
    const again = await send('{"a":1}', { idempotency: idem });
    expect(again.replayed).to.equal(true);
    expect(again.reply).to.deep.equal(first.reply);
    expect(first.keptBytes).to.be.greaterThan(0);
    expect(again.keptBytes).to.equal(0);
    expect(await store.list(ws, 'u1')).to.have.length(1);
    const reused = await send('{"a":2}', { idempotency: { keyHash: 'h1', fingerprint: 'fp2' } });
    expect(reused.reply).to.deep.equal({ sent: false, refusal: { code: 'IDEMPOTENCY_KEY_REUSED' } });
  });

  it('removes the messages named, or all of them', async () => {
    const a = await sent('1');
    const b = await sent('2');
    await sent('3');
    expect((await store.remove(ws, 'u1', [b.id, 'msg_0000000000000000001'])).map((m) => m.id)).to.deep.equal([b.id]);
    expect((await store.list(ws, 'u1')).map((m) => m.messageJson)).to.deep.equal(['1', '3']);
    expect((await store.remove(ws, 'u1')).map((m) => m.messageJson)).to.deep.equal(['1', '3']);
    expect(await store.list(ws, 'u1')).to.deep.equal([]);
    expect(a.id).to.match(MESSAGE_ID);
  });
});
