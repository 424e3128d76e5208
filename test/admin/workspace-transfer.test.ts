// Workspace export and import (admin/workspace-transfer.ts) on a single Redis and on a real
// three-master Redis Cluster: the export has one line per player in the one-player export's
// form and in each hash's own key order; an export imported into another workspace reads back
// the same (data, updated_at, versions, storage totals); bad lines are reported by number and
// nothing of them is written; skip, overwrite and fail behave as documented; a re-run after an
// interruption finishes the job.
import { Readable } from 'node:stream';
import { expect } from 'chai';
import type { Cluster, Redis } from 'ioredis';
import { AdminOperations } from '../../src/admin/operations.js';
import { encodeEntry } from '../../src/domain/entry.js';
import { keys } from '../../src/store/keys.js';
import { connectRedis, createRedis, type RedisClient } from '../../src/store/redis/redis.js';
import { masters } from '../../src/store/redis/scan.js';
import { readStorageTotals } from '../../src/store/workspaces/storage-usage.js';
import { startCluster, type TestCluster } from '../support/cluster.js';
import { testRedis } from '../support/service.js';

async function exportText(ops: AdminOperations, id: string): Promise<string> {
  const exported = await ops.exportWorkspace(id);
  let text = '';
  for await (const line of exported.lines) text += line;
  return text;
}

const stream = (text: string) => ({ stream: Readable.from([Buffer.from(text)]) });

function transferTests(redisOf: () => RedisClient) {
  let ops: AdminOperations;
  before(() => {
    ops = new AdminOperations(redisOf(), { actor: 'test' });
  });

  async function populated(players: number) {
    const ws = await ops.createWorkspace({ name: 'source' });
    const id = ws.workspaceId;
    for (let i = 0; i < players; i++) {
      await ops.setPlayerValue(id, String(i), 'coins', i);
      await ops.setPlayerValue(id, String(i), 'name', `player ${i}`);
    }
    // Several versions, integer-like keys (which an object would put first) and a deleted player.
    await ops.setPlayerValue(id, '0', 'zeta', { nested: [1, 2.5, 'é'] });
    await ops.setPlayerValue(id, '0', '7', true);
    await ops.setPlayerValue(id, '0', 'coins', 100);
    await ops.deletePlayerData(id, '1');
    return id;
  }

  it('exports one line per player, as the one-player export gives its data, keys in the hash\'s order', async () => {
    const id = await populated(30);
    const text = await exportText(ops, id);
    const lines = text.trimEnd().split('\n');
    expect(lines).to.have.length(30);
    const byUser = new Map(lines.map((l) => [JSON.parse(l).userId as string, l]));
    const zero = JSON.parse(byUser.get('0')!);
    const single = await ops.exportPlayer(id, '0');
    expect(zero).to.deep.equal({ userId: '0', version: single.version, data: single.data });
    expect(Object.keys(JSON.parse(byUser.get('0')!.replace('"7":', '"seven":')).data)).to.deep.equal(['coins', 'name', 'zeta', 'seven']);
    // The deleted player keeps its version, so a stale ifVersion stays stale after a move.
    expect(JSON.parse(byUser.get('1')!)).to.deep.equal({ userId: '1', version: 3, data: {} });
  });

  it('imports an export into another workspace: same data, times, versions and storage totals', async () => {
    const id = await populated(40);
    const text = await exportText(ops, id);
    const target = (await ops.createWorkspace({ name: 'target' })).workspaceId;
    const summary = await ops.importWorkspace(target, stream(text));
    expect(summary).to.deep.include({ complete: true, lines: 40, imported: 40, failed: 0, skipped: 0 });
    expect(await exportText(ops, target)).to.have.length(text.length);
    const sorted = (t: string) => t.trimEnd().split('\n').sort();
    expect(sorted(await exportText(ops, target))).to.deep.equal(sorted(text));
    for (const userId of ['0', '5']) {
      expect((await ops.exportPlayer(target, userId)).data).to.deep.equal((await ops.exportPlayer(id, userId)).data);
    }
    const totals = await readStorageTotals(redisOf(), target);
    expect(totals.players).to.equal(39);
    let bytes = 0;
    for (const line of text.trimEnd().split('\n')) {
      const { userId } = JSON.parse(line);
      bytes += Number(await redisOf().hget(keys.player(target, userId), '\0b'));
    }
    expect(totals.bytes).to.equal(bytes);
  });

  it('carries data keys and user ids that start with "__" (even __proto__) both ways', async () => {
    const id = (await ops.createWorkspace({ name: 'dunder' })).workspaceId;
    const players = ['__bot', '__proto__', '7'];
    const dataKeys = ['__proto__', '__meta', 'constructor', 'plain'];
    for (const userId of players) {
      for (const [i, key] of dataKeys.entries()) await ops.setPlayerValue(id, userId, key, { i, userId });
    }
    const text = await exportText(ops, id);
    const lines = text.trimEnd().split('\n').map((l) => JSON.parse(l) as { userId: string; data: Record<string, unknown> });
    expect(lines.map((l) => l.userId).sort()).to.deep.equal([...players].sort());
    for (const line of lines) expect(Object.keys(line.data), line.userId).to.deep.equal(dataKeys);

    const target = (await ops.createWorkspace({ name: 'dunder-target' })).workspaceId;
    expect(await ops.importWorkspace(target, stream(text))).to.deep.include({ imported: 3, failed: 0 });
    for (const userId of players) {
      const copied = await ops.exportPlayer(target, userId);
      expect(Object.keys(copied.data), userId).to.deep.equal(dataKeys);
      expect(copied.data, userId).to.deep.equal((await ops.exportPlayer(id, userId)).data);
    }
  });

  it('reports bad lines by number and writes nothing of them; the good ones are written', async () => {
    const target = (await ops.createWorkspace({ name: 'target' })).workspaceId;
    const good = (u: string) => JSON.stringify({ userId: u, version: 2, data: { a: { value: 1, updated_at: '2026-01-01T00:00:00.000Z' } } });
    const text = [
      good('ok1'),
      '{"userId":"bad1","version":2,"data":{"a":{"value":1,"updated_at":"2026-01-01T00:00:00.000Z"},"b":{"value":2}}}',
      'not json',
      '',
      JSON.stringify({ userId: 'bad{x}', version: 1, data: {} }),
      JSON.stringify({ userId: 'bad2', version: 0, data: { a: { value: 1, updated_at: '2026-01-01T00:00:00.000Z' } } }),
      good('ok2'),
      JSON.stringify({ userId: 'bad3', version: 1, data: { a: { value: 'x'.repeat(ops.limits.maxPlayerBytes), updated_at: '2026-01-01T00:00:00.000Z' } } }),
      '{"userId":"bad4","version":1,"data":{"a":{"value":1,"value":2,"updated_at":"2026-01-01T00:00:00.000Z"}}}',
    ].join('\n');
    const summary = await ops.importWorkspace(target, stream(text));
    expect(summary).to.deep.include({ imported: 2, failed: 6, lines: 8 });
    expect(summary.errors.map((e) => [e.line, e.code])).to.deep.equal([
      [2, 'INVALID_REQUEST'],
      [3, 'INVALID_REQUEST'],
      [5, 'INVALID_REQUEST'],
      [6, 'INVALID_REQUEST'],
      [8, 'PLAYER_TOO_LARGE'],
      [9, 'INVALID_REQUEST'],
    ]);
    expect(summary.errors[0]!.error).to.match(/data\["b"\]\.updated_at/);
    expect(summary.errors[1]!.error).to.match(/not valid JSON/);
    for (const u of ['bad1', 'bad2', 'bad3', 'bad4']) expect(await redisOf().exists(keys.player(target, u)), u).to.equal(0);
  });

  it('skip keeps existing players, and a re-run after an interruption finishes the job', async () => {
    const id = await populated(20);
    const text = await exportText(ops, id);
    const lines = text.trimEnd().split('\n');
    const target = (await ops.createWorkspace({ name: 'target' })).workspaceId;
    // "Interrupted" after 8 players.
    await ops.importWorkspace(target, stream(lines.slice(0, 8).join('\n')));
    const again = await ops.importWorkspace(target, stream(text));
    // The deleted player (no data, only its version) is "unchanged" rather than "skipped".
    expect(again).to.deep.include({ imported: 12, failed: 0 });
    expect(again.skipped + again.unchanged).to.equal(8);
    expect((await readStorageTotals(redisOf(), target)).players).to.equal(19);
  });

  it('skip leaves an existing player that holds other data exactly as it was', async () => {
    const id = await populated(3);
    const text = await exportText(ops, id);
    const target = (await ops.createWorkspace({ name: 'target' })).workspaceId;
    await ops.setPlayerValue(target, '0', 'coins', 7);
    await ops.setPlayerValue(target, '0', 'mine', 'kept');
    const before = await ops.exportPlayer(target, '0');
    const totals = await readStorageTotals(redisOf(), target);
    expect(before.data).to.not.deep.equal((await ops.exportPlayer(id, '0')).data);
    const summary = await ops.importWorkspace(target, stream(text), { mode: 'skip' });
    expect(summary).to.deep.include({ skipped: 1, imported: 2, replaced: 0 });
    const after = await ops.exportPlayer(target, '0');
    expect(after.data).to.deep.equal(before.data);
    expect(after.version).to.equal(before.version);
    // Player 1 was exported without data (deleted): only player 2 adds a player with data.
    expect((await readStorageTotals(redisOf(), target)).players).to.equal(totals.players + 1);
  });

  it('overwrite replaces existing players with a version past theirs, and a re-run changes nothing', async () => {
    const id = await populated(5);
    const text = await exportText(ops, id);
    const target = (await ops.createWorkspace({ name: 'target' })).workspaceId;
    for (let v = 0; v < 6; v++) await ops.setPlayerValue(target, '0', 'coins', v);
    const stale = (await ops.getPlayerValue(target, '0', 'coins')).version;
    const summary = await ops.importWorkspace(target, stream(text), { mode: 'overwrite' });
    expect(summary).to.deep.include({ imported: 4, replaced: 1 });
    const after = await ops.exportPlayer(target, '0');
    expect(after.data).to.deep.equal((await ops.exportPlayer(id, '0')).data);
    expect(after.version).to.be.greaterThan(stale);
    let conflict: unknown;
    await ops.setPlayerValue(target, '0', 'coins', 1, stale).catch((err: unknown) => (conflict = err));
    expect(conflict).to.have.property('code', 'VERSION_CONFLICT');
    expect(await ops.importWorkspace(target, stream(text), { mode: 'overwrite' })).to.deep.include({ unchanged: 5, replaced: 0, imported: 0 });
  });

  it('fail writes nothing when any player exists or any line is bad', async () => {
    const id = await populated(10);
    const text = await exportText(ops, id);
    const target = (await ops.createWorkspace({ name: 'target' })).workspaceId;
    await ops.setPlayerValue(target, '3', 'coins', 1);
    const refused = await ops.importWorkspace(target, stream(text), { mode: 'fail' });
    expect(refused).to.deep.include({ complete: false, imported: 0, failed: 1 });
    expect(refused.errors[0]).to.deep.include({ userId: '3', code: 'CONFLICT' });
    expect((await readStorageTotals(redisOf(), target)).players).to.equal(1);
    const bad = await ops.importWorkspace(target, stream(`${text}oops\n`), { mode: 'fail' });
    expect(bad.complete).to.equal(false);
    const fresh = (await ops.createWorkspace({ name: 'fresh' })).workspaceId;
    expect(await ops.importWorkspace(fresh, stream(text), { mode: 'fail' })).to.deep.include({ complete: true, imported: 10 });
  });
}

describe('workspace export and import', function () {
  this.timeout(60_000);

  describe('on a single Redis', () => {
    let redis: Redis;
    before(() => {
      redis = testRedis();
    });
    after(() => redis.disconnect());
    transferTests(() => redis);
  });

  describe('on a Redis Cluster', () => {
    let cluster: TestCluster | undefined;
    let redis: Cluster;
    before(async function () {
      this.timeout(60_000);
      cluster = await startCluster();
      redis = createRedis({ clusterNodes: cluster.nodes.map((n) => ({ host: '127.0.0.1', port: n.port })), commandTimeoutMs: 5000, connectTimeoutMs: 5000 }) as Cluster;
      await connectRedis(redis, 10_000);
    });
    after(async () => {
      redis?.disconnect();
      await cluster?.stop();
    });
    transferTests(() => redis);

    it('reads players from every master', async () => {
      const ops = new AdminOperations(redis, { actor: 'test' });
      const id = (await ops.createWorkspace({ name: 'spread' })).workspaceId;
      await Promise.all(Array.from({ length: 300 }, (_, i) => redis.hset(keys.player(id, String(i)), 'a', encodeEntry('1', 1))));
      const perNode = await Promise.all(masters(redis).map((n) => n.keys(keys.playerHashPattern(id))));
      expect(perNode.every((k) => k.length > 0)).to.equal(true);
      expect((await exportText(ops, id)).trimEnd().split('\n')).to.have.length(300);
    });
  });
});
