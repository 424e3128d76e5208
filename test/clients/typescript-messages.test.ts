// The TypeScript client's calls of issue 29 (clients/typescript, imported from source) against the
// real service: messages to players (sent, handed to the session that holds the player,
// acknowledged by its save exactly once, handed again after a crash), the multi-player acquire,
// and a player's versions read from game code (docs/safe-saves.md, docs/history.md).
import { expect } from 'chai';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import * as PlayerData from '../../clients/typescript/src/index.js';
import { PlayerDataClient, PlayerDataError } from '../../clients/typescript/src/index.js';
import type { CreatedWorkspace } from '../../src/admin/operations.js';
import { call, newWorkspace, testClock, useService } from '../support/service.js';
import { playerDataError, rejection } from './rejections.js';

/** Counts the requests made through fetch while `fn` runs (the requests themselves are real). */
async function countingFetch<T>(fn: () => Promise<T>): Promise<{ result: T; requests: number }> {
  const realFetch = globalThis.fetch;
  let requests = 0;
  globalThis.fetch = (...args) => {
    requests += 1;
    return realFetch(...args);
  };
  try {
    return { result: await fn(), requests };
  } finally {
    globalThis.fetch = realFetch;
  }
}

const ISO = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/;
const DAY_MS = 86_400_000;

describe('TypeScript client: messages to players (against the service)', () => {
  // A small inbox, so that INBOX_FULL takes three sends rather than a hundred.
  const t = useService({ MESSAGES_MAX_WAITING: '3' });
  let ws: CreatedWorkspace;
  let client: PlayerDataClient;
  beforeEach(async () => {
    ws = await newWorkspace(t.redis, 'pro', 'Messages');
    client = new PlayerDataClient({ baseUrl: t.service.baseUrl, apiKey: ws.apiKey, retry: { baseDelayMs: 5 } });
  });
  const stored = async (userId: number) => (await call(t.service, 'GET', `/data?userId=${userId}`, { key: ws.apiKey })).body.data;

  it('sendMessage answers the id and times; getMessages lists them oldest first and never consumes', async () => {
    const gift = await client.sendMessage(40, { gift: 'sword', from: 7 });
    expect(gift.messageId).to.match(/^msg_[0-9]{19}$/);
    expect(gift.sentAt).to.match(ISO);
    expect(Date.parse(gift.expiresAt) - Date.parse(gift.sentAt), 'default: 30 days').to.equal(30 * DAY_MS);
    const note = await client.sendMessage('40', 'welcome back', { ttlSeconds: 120 });
    expect(Date.parse(note.expiresAt) - Date.parse(note.sentAt)).to.equal(120_000);
    const nothing = await client.sendMessage(40, null);

    const waiting = [
      { id: gift.messageId, message: { gift: 'sword', from: 7 }, sentAt: gift.sentAt, expiresAt: gift.expiresAt },
      { id: note.messageId, message: 'welcome back', sentAt: note.sentAt, expiresAt: note.expiresAt },
      { id: nothing.messageId, message: null, sentAt: nothing.sentAt, expiresAt: nothing.expiresAt },
    ];
    expect(await client.getMessages(40)).to.deep.equal(waiting);
    expect(await client.getMessages(40), 'reading again: still all there').to.deep.equal(waiting);
    expect(await client.getMessages(41)).to.deep.equal([]);
  });

  it('a send retried with its idempotency key leaves one message', async () => {
    const first = await client.sendMessage(42, { coins: 10 }, { idempotencyKey: 'refund-9' });
    const again = await client.sendMessage(42, { coins: 10 }, { idempotencyKey: 'refund-9' });
    expect(again).to.deep.equal(first);
    expect((await client.getMessages(42)).map((m) => m.id)).to.deep.equal([first.messageId]);
    const reused = await playerDataError(client.sendMessage(42, { coins: 11 }, { idempotencyKey: 'refund-9' }));
    expect(reused).to.include({ operation: 'sendMessage', status: 422, code: 'IDEMPOTENCY_KEY_REUSED' });
  });

  it('acquire with load hands the waiting messages; a save acknowledging them applies each exactly once', async () => {
    await client.set(43, 'coins', 5);
    const a = await client.sendMessage(43, { coins: 10 });
    const b = await client.sendMessage(43, { coins: 20 });

    const { result: session, requests } = await countingFetch(() => client.acquireSession(43, 'server-a', { load: true }));
    expect(requests, 'the join, its data and its messages: one request').to.equal(1);
    expect(session.values).to.deep.equal({ coins: 5 });
    expect(session.messages).to.deep.equal([
      { id: a.messageId, message: { coins: 10 }, sentAt: a.sentAt },
      { id: b.messageId, message: { coins: 20 }, sentAt: b.sentAt },
    ]);
    expect(session.metadata.sessionCount).to.equal(1);
    expect(session.metadata.firstSessionAt).to.match(ISO);

    // The game applies the messages to the data it holds, then saves with their ids.
    let coins = session.values['coins'] as number;
    for (const m of session.messages) coins += (m.message as { coins: number }).coins;
    const save = { sessionId: session.sessionId, ackMessages: session.messages.map((m) => m.id), idempotencyKey: 'save-43-1' };
    const saved = await client.batch(43, [{ op: 'set', key: 'coins', value: coins }], save);
    const updatedAt = (saved.results[0] as { updatedAt: string }).updatedAt;
    expect(saved).to.deep.equal({ results: [{ key: 'coins', value: 35, updatedAt }], version: 2, messages: [] });
    expect(await client.getMessages(43), 'acknowledged in the same step as the save').to.deep.equal([]);

    // Its answer lost, the save is sent again with its key: the first answer, nothing twice.
    expect(await client.batch(43, [{ op: 'set', key: 'coins', value: coins }], save)).to.deep.equal(saved);
    // Acknowledging ids no longer waiting is no error.
    const later = await client.batch(43, [], { sessionId: session.sessionId, ackMessages: [a.messageId, b.messageId] });
    expect(later).to.deep.equal({ results: [], version: 2, messages: [] });
    expect(await stored(43)).to.deep.equal({ coins: 35 });

    const rejoin = await client.acquireSession(43, 'server-a', { load: true });
    expect(rejoin.messages, 'nothing handed again').to.deep.equal([]);
    expect(rejoin.metadata).to.deep.equal({ firstSessionAt: session.metadata.firstSessionAt, sessionCount: 2 });
  });

  it('a message that arrives while the player is held is handed by the next save, once; a releasing save hands none', async () => {
    const before = await client.sendMessage(44, 'before');
    const s = await client.acquireSession(44, 'server-a');
    expect(s, 'without load: no values, no messages').to.not.have.any.keys('values', 'messages');
    expect(s.metadata.sessionCount).to.equal(1);

    const first = await client.batch(44, [{ op: 'set', key: 'level', value: 1 }], { sessionId: s.sessionId });
    expect(first.messages, 'a session acquired without load: its first save hands what waits').to.deep.equal([
      { id: before.messageId, message: 'before', sentAt: before.sentAt },
    ]);
    const during = await client.sendMessage(44, { gift: 'shield' });
    const second = await client.batch(44, [], { sessionId: s.sessionId, ackMessages: [before.messageId] });
    expect(second.messages, 'only what arrived since').to.deep.equal([{ id: during.messageId, message: { gift: 'shield' }, sentAt: during.sentAt }]);
    expect((await client.batch(44, [], { sessionId: s.sessionId })).messages, 'each once per session').to.deep.equal([]);
    expect(await client.getMessages(44), 'handed but not acknowledged: still waiting').to.have.length(1);

    const last = await client.sendMessage(44, 'at the last save');
    const release = await client.batch(44, [], { sessionId: s.sessionId, release: true, ackMessages: [during.messageId] });
    expect(release).to.deep.equal({ results: [], version: 1 });
    expect(release, 'a save that releases hands none').to.not.have.property('messages');
    expect(await client.getMessages(44)).to.deep.equal([
      { id: last.messageId, message: 'at the last save', sentAt: last.sentAt, expiresAt: last.expiresAt },
    ]);
    const without = await client.set(44, 'level', 2);
    expect(without.version, 'free again').to.equal(2);
  });

  it('a server that crashes before its save: the next holder is handed the message again, the old one cannot acknowledge it', async () => {
    await client.set(45, 'coins', 0);
    const gift = await client.sendMessage(45, { coins: 100 });
    const a = await client.acquireSession(45, 'server-a', { load: true });
    expect(a.messages.map((m) => m.id)).to.deep.equal([gift.messageId]);
    // server-a applies the gift in memory and freezes before saving; server-b steals the player.
    const b = await client.acquireSession(45, 'server-b', { load: true, steal: true });
    expect(b.messages.map((m) => m.id), 'not acknowledged: handed again').to.deep.equal([gift.messageId]);
    expect(b.metadata.sessionCount).to.equal(2);

    const late = await playerDataError(
      client.batch(45, [{ op: 'set', key: 'coins', value: 100 }], { sessionId: a.sessionId, ackMessages: [gift.messageId] }),
    );
    expect(late).to.include({ operation: 'batch', status: 409, code: 'SESSION_LOST', attempts: 1 });
    expect((await client.getMessages(45)).map((m) => m.id), "the fenced save acknowledged nothing").to.deep.equal([gift.messageId]);

    await client.batch(45, [{ op: 'set', key: 'coins', value: 100 }], { sessionId: b.sessionId, ackMessages: [gift.messageId] });
    expect(await client.getMessages(45)).to.deep.equal([]);
    expect(await stored(45), 'the gift landed once').to.deep.equal({ coins: 100 });
  });

  it('batchPlayers takes ackMessages per player and answers each held player its messages', async () => {
    const [s1, s2] = [await client.acquireSession(46, 'server-a', { load: true }), await client.acquireSession(47, 'server-a', { load: true })];
    const m1 = await client.sendMessage(46, { coins: 1 });
    const m2 = await client.sendMessage(47, { coins: 2 });
    const autosave = await client.batchPlayers([
      { userId: 46, ops: [], sessionId: s1.sessionId },
      { userId: 47, ops: [{ op: 'set', key: 'level', value: 1 }], sessionId: s2.sessionId },
      { userId: 48, ops: [{ op: 'set', key: 'level', value: 1 }] },
    ]);
    expect(autosave.map((o) => o.success && o.messages)).to.deep.equal([
      [{ id: m1.messageId, message: { coins: 1 }, sentAt: m1.sentAt }],
      [{ id: m2.messageId, message: { coins: 2 }, sentAt: m2.sentAt }],
      undefined, // no session: no messages handed
    ]);
    expect(autosave[2]).to.not.have.property('messages');

    const shutdown = await client.batchPlayers([
      { userId: 46, ops: [{ op: 'increment', key: 'coins', amount: 1 }], sessionId: s1.sessionId, ackMessages: [m1.messageId], release: true },
      { userId: 47, ops: [{ op: 'increment', key: 'coins', amount: 2 }], sessionId: s2.sessionId, ackMessages: [m2.messageId] },
    ]);
    expect(shutdown.map((o) => o.success && o.messages)).to.deep.equal([undefined, []]);
    expect([await client.getMessages(46), await client.getMessages(47)]).to.deep.equal([[], []]);
    expect([await stored(46), await stored(47)]).to.deep.equal([{ coins: 1 }, { level: 1, coins: 2 }]);
  });

  it('INBOX_FULL (409) and PAYLOAD_TOO_LARGE (413) are PlayerDataErrors with their codes, not retried', async () => {
    for (let i = 0; i < 3; i += 1) await client.sendMessage(49, { n: i });
    const full = await playerDataError(client.sendMessage(49, { n: 3 }));
    expect(full).to.include({ operation: 'sendMessage', status: 409, code: 'INBOX_FULL', retryable: false, attempts: 1 });
    expect(full.serverMessage).to.include('MESSAGES_MAX_WAITING');

    const large = await playerDataError(client.sendMessage(50, 'x'.repeat(16 * 1024)));
    expect(large).to.include({ operation: 'sendMessage', status: 413, code: 'PAYLOAD_TOO_LARGE', retryable: false, attempts: 1 });
    expect(large.serverMessage).to.include('MESSAGE_MAX_BYTES');
    expect(await client.getMessages(50)).to.deep.equal([]);
    // 16 KiB as JSON, quotes included, is the most a message may hold.
    await client.sendMessage(50, 'x'.repeat(16 * 1024 - 2));
  });

  it('refuses arguments the service would refuse before any request', async () => {
    const { requests } = await countingFetch(async () => {
      const refusals: Array<() => Promise<unknown>> = [
        () => client.sendMessage(1, undefined as unknown as PlayerData.JsonValue),
        () => client.sendMessage(1, Number.NaN),
        () => client.sendMessage(-1, 'x'),
        () => client.sendMessage(1, 'x', { ttlSeconds: Number.POSITIVE_INFINITY }),
        () => client.getMessages(''),
        () => client.batch(1, [], { sessionId: 's', ackMessages: 'msg_1' as unknown as string[] }),
        () => client.batch(1, [], { sessionId: 's', ackMessages: [''] }),
        () => client.batchPlayers([{ userId: 1, ops: [], sessionId: 's', ackMessages: [7 as unknown as string] }]),
      ];
      for (const refuse of refusals) {
        const err = await refuse().then(
          () => expect.fail('expected a TypeError'),
          (e: unknown) => e,
        );
        expect(err).to.be.instanceOf(TypeError);
      }
    });
    expect(requests).to.equal(0);
  });

  it('the module-level functions send, list and acknowledge the same way', async () => {
    await PlayerData.init({ baseUrl: t.service.baseUrl, apiKey: ws.apiKey });
    const sent = await PlayerData.sendMessage(51, { gift: 'hat' });
    expect((await PlayerData.getMessages<{ gift: string }>(51))[0]!.message.gift).to.equal('hat');
    const joined = (await PlayerData.acquireSessions([51], 'server-a', { load: true }))[0]!;
    if (!joined.success) return expect.fail(joined.error.message);
    expect(joined.messages.map((m) => m.id)).to.deep.equal([sent.messageId]);
    await PlayerData.batch(51, [{ op: 'set', key: 'hat', value: true }], { sessionId: joined.sessionId, ackMessages: [sent.messageId] });
    expect(await PlayerData.getMessages(51)).to.deep.equal([]);
  });
});

describe('TypeScript client: acquiring many players at once (against the service)', () => {
  const t = useService();
  let ws: CreatedWorkspace;
  let client: PlayerDataClient;
  beforeEach(async () => {
    ws = await newWorkspace(t.redis, 'pro', 'Many');
    client = new PlayerDataClient({ baseUrl: t.service.baseUrl, apiKey: ws.apiKey });
  });

  it('answers each player in order in one request: sessions, and the locked one as SESSION_LOCKED with its holder', async () => {
    await client.set(60, 'level', 3);
    const gift = await client.sendMessage(60, { coins: 5 });
    const held = await client.acquireSession(61, 'server-a');

    const { result: outcomes, requests } = await countingFetch(() =>
      client.acquireSessions([60, '61', 62], 'server-b', { load: true, ttlSeconds: 120 }),
    );
    expect(requests).to.equal(1);
    expect(outcomes.map((o) => [o.userId, o.success])).to.deep.equal([['60', true], ['61', false], ['62', true]]);

    const [first, locked, fresh] = [outcomes[0]!, outcomes[1]!, outcomes[2]!];
    if (!first.success || locked.success || !fresh.success) return expect.fail('outcomes out of order');
    expect(first).to.deep.include({ userId: '60', owner: 'server-b', version: 1, values: { level: 3 } });
    expect(first.messages).to.deep.equal([{ id: gift.messageId, message: { coins: 5 }, sentAt: gift.sentAt }]);
    expect(first.metadata.sessionCount).to.equal(1);
    expect(Date.parse(first.expiresAt) - Date.now()).to.be.within(100_000, 121_000);
    expect(fresh).to.deep.include({ userId: '62', version: 0, values: {}, messages: [] });

    expect(locked.error).to.be.instanceOf(PlayerDataError);
    expect(locked.error).to.include({ operation: 'acquireSessions', status: 409, code: 'SESSION_LOCKED', retryable: false, version: 0 });
    expect(locked.error.data).to.deep.equal({ owner: 'server-a', expiresAt: held.expiresAt });

    // The sessions it answered hold their players; the locked one is still server-a's.
    const save = { sessionId: first.sessionId, ackMessages: [gift.messageId] };
    expect((await client.batch(60, [{ op: 'set', key: 'level', value: 4 }], save)).version).to.equal(2);
    expect(await playerDataError(client.set(62, 'level', 1))).to.include({ code: 'SESSION_LOCKED' });
    expect((await client.set(61, 'level', 1, { sessionId: held.sessionId })).version).to.equal(1);
  });

  it('without load answers the sessions and metadata only; steal takes a held player over', async () => {
    const held = await client.acquireSession(63, 'server-a');
    const outcomes = await client.acquireSessions([63, 64], 'server-b', { steal: true });
    expect(outcomes.every((o) => o.success)).to.equal(true);
    for (const o of outcomes) {
      expect(o).to.have.keys('userId', 'success', 'sessionId', 'owner', 'expiresAt', 'version', 'metadata');
    }
    const lost = await playerDataError(client.batch(63, [], { sessionId: held.sessionId }));
    expect(lost).to.include({ code: 'SESSION_LOST' });
  });

  it('a lost answer retried with its key gives the sessions taken, not a lock of their own', async () => {
    const key = 'join-party-1';
    const first = await client.acquireSessions([65, 66], 'server-a', { idempotencyKey: key });
    const again = await client.acquireSessions([65, 66], 'server-a', { idempotencyKey: key });
    expect(again).to.deep.equal(first);
  });

  it('a request invalid as a whole throws (the same player twice: INVALID_REQUEST); a bad argument is a TypeError first', async () => {
    const twice = await playerDataError(client.acquireSessions([67, '67'], 'server-a'));
    expect(twice).to.include({ operation: 'acquireSessions', status: 400, code: 'INVALID_REQUEST' });
    expect(twice.serverMessage).to.include('players[1]');
    const empty = await playerDataError(client.acquireSessions([], 'server-a'));
    expect(empty).to.include({ status: 400, code: 'INVALID_REQUEST' });
    for (const bad of [
      () => client.acquireSessions(67 as unknown as number[], 'a'),
      () => client.acquireSessions([-1], 'a'),
      () => client.acquireSessions([1], ''),
    ]) {
      expect(await bad().catch((e: unknown) => e)).to.be.instanceOf(TypeError);
    }
  });
});

describe('TypeScript client: versions from game code (against the service)', () => {
  const clock = testClock(Date.UTC(2031, 0, 5, 10));
  const t = useService({ HISTORY_INTERVAL_SECONDS: '300' }, { clock: clock.now });
  let ws: CreatedWorkspace;
  let client: PlayerDataClient;
  beforeEach(async () => {
    ws = await newWorkspace(t.redis, 'pro', 'Versions');
    client = new PlayerDataClient({ baseUrl: t.service.baseUrl, apiKey: ws.apiKey });
  });

  it('listVersions pages them newest first; getVersion reads the whole player at one; a save brings it back', async () => {
    await client.set(70, 'coins', 1500); // version 1, in the interval of point 0
    clock.advance(300_000);
    await client.set(70, 'level', 12); // version 2: opens the point of version 1
    clock.advance(300_000);
    await client.batch(70, [
      { op: 'set', key: 'coins', value: 999_999 },
      { op: 'set', key: 'hacked', value: true },
    ]); // version 3: opens the point of version 2

    const page = await client.listVersions(70);
    expect(page).to.include({ userId: '70', version: 3, nextBefore: null });
    expect(page!.versions.map((v) => v.version)).to.deep.equal([3, 2, 1, 0]);
    expect(page!.versions[0]).to.deep.equal({ version: 3, time: null, kind: null, by: null, keys: null });
    expect(page!.versions[1]).to.deep.include({ version: 2, kind: 'batch' });
    expect(page!.versions[1]!.keys!.slice().sort()).to.deep.equal(['coins', 'hacked']);
    expect(page!.versions[1]!.by).to.match(/^key:/);
    expect(page!.versions[1]!.time).to.match(ISO);

    const firstPage = await client.listVersions('70', { limit: 2 });
    expect(firstPage!.versions.map((v) => v.version)).to.deep.equal([3, 2]);
    expect(firstPage!.nextBefore).to.equal(2);
    const secondPage = await client.listVersions(70, { limit: 2, before: firstPage!.nextBefore! });
    expect(secondPage!.versions.map((v) => v.version)).to.deep.equal([1, 0]);
    expect(secondPage!.nextBefore).to.equal(null);

    const before = await client.getVersion(70, 2);
    expect(before).to.deep.include({ userId: '70', version: 2, currentVersion: 3, values: { coins: 1500, level: 12 } });
    expect(Object.keys(before!.updatedAt).sort()).to.deep.equal(['coins', 'level']);
    expect(Date.parse(before!.updatedAt['level']!)).to.be.greaterThan(Date.parse(before!.updatedAt['coins']!));
    expect((await client.getVersion(70, 0))!.values).to.deep.equal({});

    // The game brings version 2 back by saving what it read.
    const restore: PlayerData.BatchOp[] = Object.entries(before!.values).map(([key, value]) => ({ op: 'set', key, value }));
    await client.batch(70, [...restore, { op: 'delete', key: 'hacked' }], { ifVersion: before!.currentVersion });
    expect((await client.getAllVersioned(70))).to.deep.equal({ values: { coins: 1500, level: 12 }, exists: true, version: 4 });
  });

  it('a version not kept is VERSION_NOT_RETAINED with the current version; a player never written is undefined', async () => {
    await client.set(71, 'coins', 1);
    await client.set(71, 'coins', 2); // same interval: version 1 keeps no point of its own
    const gone = await playerDataError(client.getVersion(71, 1));
    expect(gone).to.include({ operation: 'getVersion', status: 404, code: 'VERSION_NOT_RETAINED', version: 2, retryable: false });
    const future = await playerDataError(client.getVersion(71, 9));
    expect(future).to.include({ code: 'VERSION_NOT_RETAINED', version: 2 });

    expect(await client.listVersions(72)).to.equal(undefined);
    expect(await client.getVersion(72, 0)).to.equal(undefined);
    const bad = [() => client.getVersion(71, -1), () => client.getVersion(71, 1.5), () => client.listVersions(71, { limit: -2 })];
    for (const refuse of bad) {
      expect(await refuse().catch((e: unknown) => e)).to.be.instanceOf(TypeError);
    }
    const tooMany = await playerDataError(client.listVersions(71, { limit: 101 }));
    expect(tooMany).to.include({ status: 400, code: 'INVALID_REQUEST' });
  });

  it("the README's bringBack saves an old version as a new one", async () => {
    const readme = readFileSync(new URL('../../clients/typescript/README.md', import.meta.url), 'utf8');
    const code = [...readme.matchAll(/```ts\n([\s\S]*?)```/g)].map((m) => m[1]!).find((c) => c.includes('export async function bringBack('));
    expect(code, 'the README example defining bringBack').to.be.a('string');
    const dir = mkdtempSync(join(tmpdir(), 'pds-ts-versions-'));
    const clientUrl = pathToFileURL(new URL('../../clients/typescript/src/index.ts', import.meta.url).pathname).href;
    const file = join(dir, 'bring-back.mts');
    writeFileSync(file, code!.split('@player-data-service/client').join(clientUrl));
    Object.assign(process.env, { PDS_URL: t.service.baseUrl, PDS_API_KEY: ws.apiKey });
    try {
      const { bringBack } = await import(pathToFileURL(file).href);
      await client.set(74, 'coins', 100);
      clock.advance(300_000);
      await client.batch(74, [
        { op: 'set', key: 'coins', value: 0 },
        { op: 'set', key: 'constructor', value: 'a key named like a property of every object' },
      ]);
      expect(await bringBack(74, 1)).to.equal(3);
      expect(await client.getAllVersioned(74)).to.deep.equal({ values: { coins: 100 }, exists: true, version: 3 });
      expect((await rejection(bringBack(75, 0))).message).to.match(/never written/);
    } finally {
      delete process.env['PDS_URL'];
      delete process.env['PDS_API_KEY'];
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('module-level listVersions and getVersion after init', async () => {
    await PlayerData.init({ baseUrl: t.service.baseUrl, apiKey: ws.apiKey });
    await PlayerData.set(73, 'name', 'Ann');
    expect((await PlayerData.listVersions(73))!.versions.map((v) => v.version)).to.deep.equal([1, 0]);
    expect((await PlayerData.getVersion(73, 1))!.values).to.deep.equal({ name: 'Ann' });
  });
});
