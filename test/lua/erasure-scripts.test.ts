// The erasure's scripts, through the stores that call them (src/store/): each moves exactly
// the keys and counts its header says, and refuses what it says it refuses.
import { expect } from 'chai';
import type { Redis } from 'ioredis';
import { keys } from '../../src/store/keys.js';
import { ERASURE_GROUP, ErasureJobStore, type JobEntry } from '../../src/store/installation/erasure-jobs.js';
import { GameMap } from '../../src/store/installation/game-map.js';
import { erasePlayerKeys } from '../../src/store/players/player-keys.js';
import { PlayerDataStore } from '../../src/store/players/player-data.js';
import { newJobId } from '../../src/erasure/requests.js';
import { freshGameId } from '../support/erasure.js';
import { randomId } from '../support/random.js';
import { testRedis } from '../support/service.js';

const LIMITS = { maxKeysPerPlayer: 100, maxPlayerBytes: 100_000, idempotencyTtlSeconds: 60, history: { intervalMs: 300_000, maxVersions: 10, fineMs: 86_400_000, hourlyMs: 168 * 3_600_000, maxAgeMs: 3_600_000, maxBytes: 100_000 } };
const DAY = 86_400_000;

describe('lua/erase-player-keys.lua', () => {
  let redis: Redis;
  before(() => {
    redis = testRedis();
  });
  after(() => redis.disconnect());

  it('deletes the keys given in one step and answers the bytes and the player the hash counted', async () => {
    const ws = randomId('ws');
    const store = new PlayerDataStore(redis, LIMITS);
    const write = (value: number) => store.write(ws, '7', { ops: [{ op: 'set', key: 'coins', valueJson: String(value) }] }, { nowMs: Date.now(), kind: 'set', actor: 'test' });
    await write(1);
    await write(22);
    const meta = await redis.hmget(keys.player(ws, '7'), '\0b', '\0h');
    const history = keys.playerHistory(ws, '7');
    expect(await redis.exists(history)).to.equal(1);
    const other = `${keys.player(ws, '7')}:m:1`;
    await redis.set(other, 'a message kept under the tag by a later release');
    const erased = await erasePlayerKeys(redis, ws, '7', [keys.player(ws, '7'), history, other]);
    expect(erased).to.deep.equal({ keysDeleted: 3, bytes: Number(meta[0]) + Number(meta[1]), historyBytes: Number(meta[1]), players: 1, messages: new Map(), keptElsewhere: [] });
    expect(erased.historyBytes, 'the writes kept history').to.be.greaterThan(0);
    expect(await redis.exists(keys.player(ws, '7'), history, other)).to.equal(0);
    // Again: nothing left, nothing counted.
    expect(await erasePlayerKeys(redis, ws, '7', [keys.player(ws, '7')])).to.deep.equal({ keysDeleted: 0, bytes: 0, historyBytes: 0, players: 0, messages: new Map(), keptElsewhere: [] });
  });

  it('counts a hash written before versions existed by its fields', async () => {
    const ws = randomId('ws');
    await redis.hset(keys.player(ws, '8'), 'coins', '[1,5]', 'name', '[1,"x"]');
    const erased = await erasePlayerKeys(redis, ws, '8', [keys.player(ws, '8')]);
    expect(erased).to.deep.equal({ keysDeleted: 1, bytes: 'coins'.length + 5 + 'name'.length + 7, historyBytes: 0, players: 1, messages: new Map(), keptElsewhere: [] });
  });

  it('answers the waiting messages\' bytes by the hour they expire in, and the records its notes name', async () => {
    const ws = randomId('ws');
    const hour = 3_600_000;
    const inbox = keys.playerInbox(ws, '9');
    const soon = 500 * hour + 10;
    const later = 600 * hour + 5;
    const values = { msg_a: `1|${soon}|{"gift":1}`, msg_b: `2|${soon + 20}|"x"`, msg_c: `3|${later}|[1,2]` };
    await redis.hset(inbox, { '#': '3', ...values });
    const note = keys.playerKeptElsewhere(ws, '9');
    await redis.zadd(note, Date.now() + 60_000, 'pds:elsewhere:1', Date.now() + 90_000, 'pds:elsewhere:2');
    const erased = await erasePlayerKeys(redis, ws, '9', [inbox, note]);
    const size = (id: keyof typeof values) => id.length + values[id].length;
    expect(erased.keysDeleted).to.equal(2);
    expect(erased.messages).to.deep.equal(new Map([[500, size('msg_a') + size('msg_b')], [600, size('msg_c')]]));
    expect(erased.keptElsewhere).to.deep.equal(['pds:elsewhere:1', 'pds:elsewhere:2']);
    expect(await redis.exists(inbox, note)).to.equal(0);
  });
});

describe('lua/erasure-request.lua', () => {
  let redis: Redis;
  let jobs: ErasureJobStore;
  before(() => {
    redis = testRedis();
    jobs = new ErasureJobStore(redis);
  });
  after(() => redis.disconnect());

  it('records a job with its stream entry and counts, a notification only once', async () => {
    const before = await jobs.counts();
    const notification = randomId('n');
    const first = newJobId();
    const made = await jobs.record(first, { id: first, userId: '1', requestedAtMs: String(Date.now()) }, { nowMs: Date.now(), notificationHash: notification, markerMs: DAY, listedMs: DAY });
    expect(made).to.deep.equal({ recorded: true, jobId: first });
    const fields = (await jobs.get(first))!;
    expect(fields['state']).to.equal('pending');
    expect((await redis.xrange(keys.erasureStream(), fields['entry']!, fields['entry']!))[0]![1]).to.deep.equal(['job', first]);
    const again = await jobs.record(newJobId(), { userId: '1' }, { nowMs: Date.now(), notificationHash: notification, markerMs: DAY, listedMs: DAY });
    expect(again).to.deep.equal({ recorded: false, jobId: first });
    const after = await jobs.counts();
    expect(after.requested - before.requested).to.equal(1);
    expect(await redis.pttl(keys.erasureNotification(notification))).to.be.within(DAY - 60_000, DAY);
    expect(await redis.zscore(keys.erasureIndex(), first)).to.not.equal(null);
    await jobs.transition(first, 'done', { keepMs: 60_000 });
  });
});

describe('lua/erasure-transition.lua', () => {
  let redis: Redis;
  let jobs: ErasureJobStore;
  before(async () => {
    redis = testRedis();
    jobs = new ErasureJobStore(redis);
    await jobs.ensureGroup();
  });
  after(() => redis.disconnect());

  async function newJob(): Promise<{ jobId: string; entry: string }> {
    const jobId = newJobId();
    await jobs.record(jobId, { id: jobId, userId: '42', requestedAtMs: String(Date.now()) }, { nowMs: Date.now(), markerMs: DAY, listedMs: DAY });
    return { jobId, entry: (await jobs.get(jobId))!['entry']! };
  }
  const pendingEntries = async () => ((await redis.xpending(keys.erasureStream(), ERASURE_GROUP, '-', '+', 100000)) as Array<[string]>).map((p) => p[0]);

  it('moves pending -> failed -> done with the counts, drops the user id and the entry, and never moves a done job', async () => {
    const { jobId, entry } = await newJob();
    const consumer = randomId('worker');
    // Delivered to a worker, so it is pending in the group.
    const delivered: JobEntry[] = [];
    for (let i = 0; i < 1000 && !delivered.some((e) => e.jobId === jobId); i++) delivered.push(...(await jobs.readNew(consumer, 100)));
    expect(delivered.map((e) => e.jobId)).to.include(jobId);
    const c0 = await jobs.counts();
    expect(await jobs.transition(jobId, 'failed', { keepMs: 60_000, fields: { lastError: 'boom' } })).to.equal(true);
    const c1 = await jobs.counts();
    expect([c1.pending - c0.pending, c1.failed - c0.failed]).to.deep.equal([-1, 1]);
    expect(await pendingEntries()).to.include(entry);
    expect(await jobs.lease(jobId, 'me', 60_000)).to.equal(true);
    expect(await jobs.transition(jobId, 'done', { holder: 'me', keepMs: 60_000 })).to.equal(true);
    const c2 = await jobs.counts();
    expect([c2.failed - c1.failed, c2.done - c1.done]).to.deep.equal([-1, 1]);
    const fields = (await jobs.get(jobId))!;
    expect(fields['state']).to.equal('done');
    expect(fields).to.not.have.property('userId');
    expect(await redis.pttl(keys.erasureJob(jobId))).to.be.within(1, 60_000);
    expect(await redis.exists(keys.erasureLease(jobId))).to.equal(0);
    expect(await redis.xrange(keys.erasureStream(), entry, entry)).to.deep.equal([]);
    expect(await pendingEntries()).to.not.include(entry);
    expect(await jobs.transition(jobId, 'failed', { keepMs: 60_000 })).to.equal(false);
    expect((await jobs.get(jobId))!['state']).to.equal('done');
  });

  it('forgets workers of the group that have nothing pending and have been idle long enough', async () => {
    const gone = randomId('worker');
    const { jobId } = await newJob();
    for (let i = 0; i < 1000; i++) if ((await jobs.readNew(gone, 100)).some((e) => e.jobId === jobId)) break;
    const names = async () => ((await redis.xinfo('CONSUMERS', keys.erasureStream(), ERASURE_GROUP)) as string[][]).map((c) => c[1]);
    await new Promise((resolve) => setTimeout(resolve, 20));
    // Still holding its entry: kept.
    await jobs.forgetIdleWorkers(10);
    expect(await names()).to.include(gone);
    await jobs.transition(jobId, 'done', { keepMs: 60_000 });
    await new Promise((resolve) => setTimeout(resolve, 20));
    expect(await jobs.forgetIdleWorkers(10)).to.be.at.least(1);
    expect(await names()).to.not.include(gone);
  });

  it('parks an unmapped job outside the stream and requeues it with a new entry', async () => {
    const { jobId, entry } = await newJob();
    const c0 = await jobs.counts();
    expect(await jobs.transition(jobId, 'unmapped', { keepMs: 60_000, fields: { unmappedGames: '["5"]' } })).to.equal(true);
    expect(await jobs.unmappedIds()).to.include(jobId);
    expect(await redis.xrange(keys.erasureStream(), entry, entry)).to.deep.equal([]);
    const c1 = await jobs.counts();
    expect([c1.pending - c0.pending, c1.unmapped - c0.unmapped]).to.deep.equal([-1, 1]);
    expect((await jobs.get(jobId))!['userId']).to.equal('42');
    expect(await jobs.transition(jobId, 'requeue', { keepMs: 60_000 })).to.equal(true);
    const fresh = (await jobs.get(jobId))!;
    expect(fresh['state']).to.equal('pending');
    expect(fresh['entry']).to.not.equal(entry);
    expect((await redis.xrange(keys.erasureStream(), fresh['entry']!, fresh['entry']!))[0]![1]).to.deep.equal(['job', jobId]);
    expect(await jobs.unmappedIds()).to.not.include(jobId);
    const c2 = await jobs.counts();
    expect([c2.pending - c1.pending, c2.unmapped - c1.unmapped]).to.deep.equal([1, -1]);
    // A pending job is no requeue's.
    expect(await jobs.transition(jobId, 'requeue', { keepMs: 60_000 })).to.equal(false);
    await jobs.transition(jobId, 'done', { keepMs: 60_000 });
  });
});

describe('lua/erasure-lease.lua', () => {
  let redis: Redis;
  let jobs: ErasureJobStore;
  before(() => {
    redis = testRedis();
    jobs = new ErasureJobStore(redis);
  });
  after(() => redis.disconnect());

  it('renews and releases only the holder\'s lease', async () => {
    const jobId = newJobId();
    expect(await jobs.lease(jobId, 'a', 1000)).to.equal(true);
    expect(await jobs.lease(jobId, 'b', 1000)).to.equal(false);
    expect(await jobs.renewLease(jobId, 'b', 60_000)).to.equal(false);
    expect(await redis.pttl(keys.erasureLease(jobId))).to.be.at.most(1000);
    expect(await jobs.renewLease(jobId, 'a', 60_000)).to.equal(true);
    expect(await redis.pttl(keys.erasureLease(jobId))).to.be.greaterThan(1000);
    await jobs.releaseLease(jobId, 'b');
    expect(await redis.get(keys.erasureLease(jobId))).to.equal('a');
    await jobs.releaseLease(jobId, 'a');
    expect(await redis.exists(keys.erasureLease(jobId))).to.equal(0);
  });
});

describe('lua/set-games.lua', () => {
  let redis: Redis;
  let games: GameMap;
  before(() => {
    redis = testRedis();
    games = new GameMap(redis);
  });
  after(() => redis.disconnect());

  it('replaces a workspace\'s games, and refuses a game another workspace serves without writing anything', async () => {
    const [a, b] = [randomId('ws'), randomId('ws')];
    const [g1, g2, g3] = [freshGameId(), freshGameId(), freshGameId()].map(String) as [string, string, string];
    expect(await games.set(a, [g1, g2])).to.deep.equal({ ok: true, removed: 0, added: 2 });
    expect(await games.set(a, [g2, g3])).to.deep.equal({ ok: true, removed: 1, added: 1 });
    expect(await games.of(a)).to.have.members([g2, g3]);
    expect(await games.set(b, [g1, g3])).to.deep.equal({ ok: false, gameId: g3, servedBy: a });
    expect(await games.of(b)).to.deep.equal([]);
    expect(await redis.hget(keys.games(), g1)).to.equal(null);
    expect(await games.resolve([g1, g2, g3])).to.deep.equal({ workspaceIds: [a], unknown: [g1] });
    expect(await games.set(a, [])).to.deep.equal({ ok: true, removed: 2, added: 0 });
  });
});

describe('lua/audit-rename.lua', () => {
  let redis: Redis;
  before(() => {
    redis = testRedis();
  });
  after(() => redis.disconnect());

  it('renames exactly the members named, where the entry holds the text asked, on every page', async () => {
    const list = randomId('pds:test-audit');
    const entry = (target: string, i: number) => JSON.stringify({ at: `t${i}`, actor: 'a', action: 'player.get', target, details: { key: 'k' } });
    const entries = Array.from({ length: 25 }, (_, i) => entry(i % 3 === 0 ? 'player:ws_a/42' : i % 3 === 1 ? 'player:ws_a/421' : 'player:ws_b/42', i));
    const removal = (ws: string, userId: string) => JSON.stringify({ at: 't', actor: 'a', action: 'board.remove-entry', target: `board:${ws}/b`, workspaceId: ws, details: { userId, deleted: true } });
    entries.push(removal('ws_a', '42'), removal('ws_a', '421'), removal('ws_b', '42'));
    await redis.rpush(list, ...entries);
    const renames = [
      ['', '"target":"player:ws_a/42"', '"target":"player:ws_a/erased-user:d"'],
      ['', '"target":"player:ws_b/42"', '"target":"player:ws_b/erased-user:d"'],
      ['"workspaceId":"ws_a"', '"userId":"42"', '"userId":"erased-user:d"'],
    ];
    let renamed = 0;
    for (let start = 0; start < entries.length; start += 10) {
      const [changed] = await redis.auditRename(list, String(start), '10', ...renames.flat());
      renamed += Number(changed);
    }
    expect(renamed).to.equal(18);
    const after = await redis.lrange(list, 0, -1);
    after.slice(0, 25).forEach((text, i) => {
      const expected = i % 3 === 0 ? 'player:ws_a/erased-user:d' : i % 3 === 1 ? 'player:ws_a/421' : 'player:ws_b/erased-user:d';
      expect(JSON.parse(text)).to.deep.equal({ ...JSON.parse(entries[i]!), target: expected });
    });
    expect(after.slice(25).map((text) => JSON.parse(text).details.userId)).to.deep.equal(['erased-user:d', '421', '42']);
    await redis.del(list);
  });
});
