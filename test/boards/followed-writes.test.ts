// Boards that follow a player key (boards/followed-writes.ts): every write of the key, from every
// endpoint, has the stored value on the board by the time it is answered; the players written
// before the follow are put on it by the follow itself; and a service killed between a player's
// write and its board is mended by another instance's sweep.
import { expect } from 'chai';
import { FollowedWrites, SWEEP_AFTER_MS } from '../../src/boards/followed-writes.js';
import { BoardRegistry } from '../../src/store/boards/board-registry.js';
import { LeaderboardStore } from '../../src/store/boards/leaderboard-store.js';
import { createLogger } from '../../src/logger.js';
import { keys } from '../../src/store/keys.js';
import { PlayerDataStore, playerLimitsOf } from '../../src/store/players/player-data.js';
import { EventSubscriber } from '../../src/store/redis/events.js';
import { createRedis } from '../../src/store/redis/redis.js';
import { ADMIN_TOKEN, adminCall } from '../support/admin.js';
import { spawnService } from '../support/child-service.js';
import { testRedisUrl } from '../support/hooks.js';
import { startRedisProxy } from '../support/redis-proxy.js';
import { client, newWorkspace, testClock, testConfig, useService } from '../support/service.js';

describe('boards that follow a player key', function () {
  this.timeout(60_000);
  const clock = testClock();
  const t = useService({ ADMIN_TOKEN, PLAYER_INDEX_FLUSH_MS: '100' }, { clock: clock.now });
  let api: ReturnType<typeof client>;
  let workspaceId: string;

  beforeEach(async () => {
    const ws = await newWorkspace(t.redis);
    workspaceId = ws.workspaceId;
    api = client(t.service, ws.apiKey);
  });

  const follow = (board: string, key: string | null) =>
    adminCall(t.service, 'PATCH', `/workspaces/${workspaceId}/leaderboards/${board}`, { body: { follow: key } });
  /** Every intent of a write in flight, in every shard. */
  const intents = async () => (await Promise.all(keys.followPendingAll().map((key) => t.redis.zrange(key, '0', '-1')))).flat();
  /** The board as the public API pages it: user id -> score. */
  const board = async (name: string) => {
    const res = await api.get(`/leaderboards/${name}?limit=100`);
    expect(res.status, res.text).to.equal(200);
    return Object.fromEntries((res.body.data.entries as Array<{ userId: string; score: number }>).map((e) => [e.userId, e.score]));
  };

  it('puts the players already written on the board when it starts to follow, and no one else', async () => {
    await api.post('/data/set', { userId: 1, key: 'coins', value: 50 });
    await api.post('/data/set', { userId: 2, key: 'coins', value: 70 });
    await api.post('/data/set', { userId: 3, key: 'level', value: 9 });
    await api.post('/data/set', { userId: 4, key: 'coins', value: 'lots' });
    // The players list is written by each instance every PLAYER_INDEX_FLUSH_MS.
    await new Promise((r) => setTimeout(r, 300));
    const res = await follow('rich', 'coins');
    expect(res.status, res.text).to.equal(200);
    expect(res.body.data).to.include({ board: 'rich', backfilled: 4 });
    expect(res.body.data.follow).to.deep.equal({ key: 'coins' });
    // A value that is not a number puts no one on the board.
    expect(await board('rich')).to.deep.equal({ '1': 50, '2': 70 });
  });

  it('has the stored value on the board when any write of the key is answered: set, increment, delete, batches, sessions, admin writes, restore', async () => {
    await follow('coins', 'coins');
    await follow('coins-too', 'coins');
    await api.post('/data/set', { userId: 10, key: 'coins', value: 5 });
    expect(await board('coins')).to.deep.equal({ '10': 5 });
    await api.post('/data/increment', { userId: 10, key: 'coins', amount: 3 });
    expect(await board('coins')).to.deep.equal({ '10': 8 });
    // A write of another key leaves the board as it was.
    await api.post('/data/set', { userId: 10, key: 'level', value: 2 });
    expect(await board('coins')).to.deep.equal({ '10': 8 });
    await api.post('/data/batch', { userId: 11, ops: [{ op: 'set', key: 'coins', value: 20 }, { op: 'set', key: 'x', value: 1 }] });
    await api.post('/data/batch', {
      players: [
        { userId: 12, ops: [{ op: 'increment', key: 'coins', amount: 7 }] },
        { userId: 13, ops: [{ op: 'set', key: 'coins', value: 1.5 }] },
      ],
    });
    expect(await board('coins')).to.deep.equal({ '10': 8, '11': 20, '12': 7, '13': 1.5 });
    // Under a session, and a save that releases it.
    const session = await api.post('/sessions/acquire', { userId: 14, owner: 'job-A', load: true });
    await api.post('/data/batch', { userId: 14, sessionId: session.body.data.sessionId, release: true, ops: [{ op: 'set', key: 'coins', value: 99 }] });
    expect((await board('coins'))['14']).to.equal(99);
    // Deletes take the player off: one key, then all of a player's data.
    await api.post('/data/delete', { userId: 10, key: 'coins' });
    await api.post('/data/delete', { userId: 11 });
    // An operator's write counts too.
    expect((await adminCall(t.service, 'PUT', `/workspaces/${workspaceId}/players/12`, { body: { key: 'coins', value: 1000 } })).status).to.equal(200);
    expect(await board('coins')).to.deep.equal({ '12': 1000, '13': 1.5, '14': 99 });
    // Every board that follows the key.
    expect(await board('coins-too')).to.deep.equal(await board('coins'));
    // A value that is no longer a number takes the player off (in a later restore interval).
    clock.advance(300_000);
    await api.post('/data/set', { userId: 13, key: 'coins', value: 'gone' });
    expect(await board('coins')).to.not.have.property('13');
    // A restore is a write: the restored value is on the board.
    const restored = await adminCall(t.service, 'POST', `/workspaces/${workspaceId}/players/13/restore`, { body: { version: 1 } });
    expect(restored.status, restored.text).to.equal(200);
    expect((await board('coins'))['13']).to.equal(1.5);
    // Unfollowed: writes no longer reach the board; nothing is left in flight.
    await follow('coins', null);
    await api.post('/data/set', { userId: 12, key: 'coins', value: 1 });
    expect((await board('coins'))['12']).to.equal(1000);
    expect((await board('coins-too'))['12']).to.equal(1);
    expect(await intents()).to.satisfy((members: string[]) => !members.some((m) => m.includes(workspaceId)));
  });

  it('mends what a crashed writer left: a sweep puts the stored value on the board, then forgets the intent', async () => {
    await follow('b', 'score');
    let now = Date.now();
    const config = testConfig();
    const registry = new BoardRegistry(t.redis, config.leaderboards.maxBoards);
    const boards = new LeaderboardStore(t.redis, registry, { maxEntries: 1000, idempotencyTtlSeconds: 60 });
    const follower = new FollowedWrites(t.redis, registry, boards, { recordBoardBytes: () => undefined, commandTimeoutMs: 1000, now: () => now });
    const players = new PlayerDataStore(t.redis, playerLimitsOf(config));
    // A writer that stops after the player's write: the intent and the write, no board.
    const write = { ops: [{ op: 'set' as const, key: 'score', valueJson: '42' }] };
    const intent = await follower.intent(workspaceId, '7', ['score'], now);
    expect(intent).to.exist;
    await players.write(workspaceId, '7', write, { nowMs: now, kind: 'set', actor: 'key:k' });
    expect(await board('b')).to.deep.equal({});
    // Too young for the sweep: the writer may still be on its way.
    expect(await follower.sweep()).to.equal(0);
    now += SWEEP_AFTER_MS + 1;
    expect(await follower.sweep()).to.be.at.least(1);
    expect(await board('b')).to.deep.equal({ '7': 42 });
    // Kept (and mended again) until its write could no longer land, then removed.
    const mine = async () => (await t.redis.zrange(intent!.key, '0', '-1')).filter((m) => m === intent!.member);
    expect(await mine()).to.have.length(1);
    now += 1000;
    await follower.sweep();
    expect(await mine()).to.deep.equal([]);
    await follower.stop();
  });

  it('mends a write whose service was killed before it reached the board, within a second, from another instance', async () => {
    await follow('k', 'coins');
    const ws = await newWorkspace(t.redis);
    await adminCall(t.service, 'PATCH', `/workspaces/${ws.workspaceId}/leaderboards/k`, { body: { follow: 'coins' } });
    const proxy = await startRedisProxy(Number(new URL(testRedisUrl()).port));
    const child = await spawnService({ REDIS_URL: proxy.url });
    try {
      // The child's write reaches Redis; its answer never reaches the child, which is killed.
      proxy.holdFrom(new RegExp(`p:\\{${ws.workspaceId}:5\\}`));
      const pending = fetch(`${child.baseUrl}/data/set`, {
        method: 'POST',
        headers: { 'x-api-key': ws.apiKey, 'content-type': 'application/json' },
        body: JSON.stringify({ userId: 5, key: 'coins', value: 321 }),
      }).catch(() => undefined);
      const applied = Date.now();
      for (let i = 0; i < 100 && (await t.redis.hget(keys.player(ws.workspaceId, '5'), 'coins')) === null; i++) await new Promise((r) => setTimeout(r, 10));
      child.process.kill('SIGKILL');
      await child.exited;
      await pending;
      const other = client(t.service, ws.apiKey);
      const score = async () => (await other.get('/leaderboards/k/players/5')).body.data?.score as number | undefined;
      // The player's write landed; its intent waits; the board has nothing yet.
      expect(await t.redis.hget(keys.player(ws.workspaceId, '5'), 'coins')).to.not.equal(null);
      expect((await intents()).some((m) => m.includes(ws.workspaceId))).to.equal(true);
      expect(await score()).to.equal(undefined);
      // This test's own service (another instance) sweeps it.
      let mendedAfter = -1;
      for (let i = 0; i < 300; i++) {
        if ((await score()) === 321) {
          mendedAfter = Date.now() - applied;
          break;
        }
        await new Promise((r) => setTimeout(r, 20));
      }
      expect(mendedAfter, 'on the board').to.be.greaterThan(0);
      // SWEEP_AFTER_MS (500) plus a sweep's interval (250): well within the second promised.
      expect(mendedAfter, `mended after ${mendedAfter} ms`).to.be.below(1000);
    } finally {
      child.process.kill('SIGKILL');
      proxy.release();
      await proxy.close();
    }
  });

  it("keeps a workspace's follows past their time while Redis cannot answer their refresh, never once a follow change dropped them", async () => {
    await follow('b', 'score');
    let now = Date.now();
    const proxy = await startRedisProxy(Number(new URL(testRedisUrl()).port));
    const viaProxy = createRedis({ url: proxy.url, commandTimeoutMs: 100, connectTimeoutMs: 1000 });
    const subscriber = createRedis({ url: testRedisUrl(), commandTimeoutMs: 1000, connectTimeoutMs: 1000, autoPipelining: false });
    const events = new EventSubscriber(subscriber, createLogger({ logLevel: 'silent', nodeEnv: 'test' }));
    await Promise.all([viaProxy.connect(), events.start()]);
    const config = testConfig();
    const registry = new BoardRegistry(viaProxy, config.leaderboards.maxBoards);
    const boards = new LeaderboardStore(viaProxy, registry, { maxEntries: 1000, idempotencyTtlSeconds: 60 });
    const follower = new FollowedWrites(viaProxy, registry, boards, { events, recordBoardBytes: () => undefined, commandTimeoutMs: 100, now: () => now });
    const followed = { score: ['b'] };
    try {
      expect(Object.fromEntries(await follower.followedIn(workspaceId))).to.deep.equal(followed);
      // Past its 60 s, with the workspace's master not answering: the entry stands in.
      now += 61_000;
      proxy.hold();
      expect(Object.fromEntries(await follower.followedIn(workspaceId))).to.deep.equal(followed);
      // Standing in, past the second it is kept: answered at once, the refresh sent behind it.
      now += 1001;
      const sent = proxy.sent().length;
      const answer = await Promise.race([follower.followedIn(workspaceId), new Promise((r) => setTimeout(() => r('waited'), 50))]);
      expect(Object.fromEntries(answer as Map<string, string[]>)).to.deep.equal(followed);
      await new Promise((r) => setTimeout(r, 150));
      expect(proxy.sent().length, 'a refresh sent').to.be.greaterThan(sent);
      // Past twice its time: no more.
      now += 60_000;
      const failed = await follower.followedIn(workspaceId).then(() => undefined, (err: unknown) => err);
      expect(failed, 'past twice its time').to.be.instanceOf(Error);
      proxy.release();
      expect(Object.fromEntries(await follower.followedIn(workspaceId))).to.deep.equal(followed);
      // The subscription dropped and came back (events missed): read again, standing in meanwhile.
      events.emit('reset');
      proxy.hold();
      const before = proxy.sent().length;
      expect(Object.fromEntries(await follower.followedIn(workspaceId))).to.deep.equal(followed);
      expect(proxy.sent().length, 'asked Redis first').to.be.greaterThan(before);
      proxy.release();
      // Dropped by a follow change's event (published by the admin route): nothing stands in.
      now += 61_000;
      events.emit('event', { type: 'workspace', workspaceId });
      proxy.hold();
      const dropped = await follower.followedIn(workspaceId).then(() => undefined, (err: unknown) => err);
      expect(dropped, 'dropped by an invalidation').to.be.instanceOf(Error);
    } finally {
      proxy.release();
      await follower.stop();
      await events.stop();
      viaProxy.disconnect();
      await proxy.close();
    }
  });

  it("writes an intent to the next shard when its own shard's write fails, and tries that shard last for a while", async () => {
    await follow('b', 'score');
    const config = testConfig();
    const registry = new BoardRegistry(t.redis, config.leaderboards.maxBoards);
    const boards = new LeaderboardStore(t.redis, registry, { maxEntries: 1000, idempotencyTtlSeconds: 60 });
    const probe = new FollowedWrites(t.redis, registry, boards, { recordBoardBytes: () => undefined, commandTimeoutMs: 1000 });
    const [first, second] = probe.shardsFor(workspaceId, '9');
    // A user that may not touch the first shard's key (NOPERM), as a failing master refuses it.
    const user = `fw-${Date.now()}`;
    const otherShards = keys.followPendingAll().filter((key) => key !== keys.followPending(first!));
    await t.redis.call('ACL', 'SETUSER', user, 'on', '>pw', 'resetkeys', ...otherShards.map((key) => `~${key}`), '~pds:ws:*', '~pds:lb:*', '~pds:p:*', '+@all');
    const limited = createRedis({ url: testRedisUrl().replace('redis://', `redis://${user}:pw@`), commandTimeoutMs: 1000, connectTimeoutMs: 1000 });
    await limited.connect();
    const follower = new FollowedWrites(limited, new BoardRegistry(limited, config.leaderboards.maxBoards), boards, { recordBoardBytes: () => undefined, commandTimeoutMs: 1000 });
    try {
      const intent = await follower.intent(workspaceId, '9', ['score'], Date.now());
      expect(intent!.key).to.equal(keys.followPending(second!));
      expect(await t.redis.zscore(intent!.key, intent!.member)).to.not.equal(null);
      // The failed shard is tried last now.
      expect(follower.shardsFor(workspaceId, '9')[0]).to.equal(second);
      expect(follower.shardsFor(workspaceId, '9').at(-1)).to.equal(first);
      await follower.drop(intent!);
      expect(await t.redis.zscore(intent!.key, intent!.member)).to.equal(null);
    } finally {
      await follower.stop();
      await probe.stop();
      limited.disconnect();
      await t.redis.call('ACL', 'DELUSER', user);
    }
  });
});
