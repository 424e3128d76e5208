// Deleting a workspace with thousands of players: nothing of it is left, nothing of any other
// workspace is touched, an interrupted run can be repeated, and its API keys stop at once.
import { expect } from 'chai';
import type { Redis } from 'ioredis';
import { hashApiKey } from '../../src/domain/api-key.js';
import { encodeEntry } from '../../src/domain/entry.js';
import { keys } from '../../src/store/keys.js';
import { testOps } from '../support/admin.js';
import { call, client, newWorkspace, useService } from '../support/service.js';

/** Writes `count` players with two keys each, in pipelined batches. */
export async function seedPlayers(redis: Redis, workspaceId: string, count: number): Promise<void> {
  for (let start = 0; start < count; start += 1000) {
    const pipeline = redis.pipeline();
    for (let i = start; i < Math.min(count, start + 1000); i++) {
      pipeline.hset(keys.player(workspaceId, `u${i}`), 'coins', encodeEntry(String(i), 1), 'name', encodeEntry('"p"', 1));
    }
    await pipeline.exec();
  }
}

/** Every Redis key whose name mentions the workspace, found by SCAN over the whole keyspace. */
export async function keysMentioning(redis: Redis, workspaceId: string): Promise<string[]> {
  const found: string[] = [];
  let cursor = '0';
  do {
    const [next, page] = await redis.scan(cursor, 'MATCH', `*${workspaceId}*`, 'COUNT', 1000);
    cursor = next;
    found.push(...page);
  } while (cursor !== '0');
  return found;
}

describe('workspace deletion', () => {
  const t = useService();

  it('erases thousands of players, every key and record, and leaves other workspaces alone', async function () {
    this.timeout(60_000);
    const ops = testOps(t.redis);
    const doomed = await newWorkspace(t.redis);
    const other = await newWorkspace(t.redis);
    // A workspace whose id starts with the doomed one's must not match its patterns.
    const lookalike = await ops.createWorkspace({ name: 'lookalike', id: `${doomed.workspaceId}x` });
    const second = await ops.createKey(doomed.workspaceId, { scope: 'read' });
    await seedPlayers(t.redis, doomed.workspaceId, 3000);
    await seedPlayers(t.redis, other.workspaceId, 50);
    await seedPlayers(t.redis, lookalike.workspaceId, 20);
    // Traffic leaves usage, rate-limit and last-use records behind.
    await client(t.service, doomed.apiKey).post('/data/set', { userId: 'u1', key: 'extra', value: 1 });
    await t.service.lastUsed.flush();
    expect(await t.redis.exists(keys.keyLastUsed(doomed.workspaceId))).to.equal(1);
    const otherBefore = (await keysMentioning(t.redis, other.workspaceId)).sort();

    const progress: number[] = [];
    const result = await ops.deleteWorkspace(doomed.workspaceId, {
      onProgress: (p) => void (p.phase === 'players' && progress.push(p.done)),
    });
    expect(result).to.deep.equal({ workspaceId: doomed.workspaceId, keysDeleted: 2, playersDeleted: 3000 });
    expect(progress.length).to.be.greaterThan(1);

    expect(await keysMentioning(t.redis, doomed.workspaceId).then((k) => k.filter((n) => !n.includes(lookalike.workspaceId)))).to.deep.equal([]);
    for (const apiKey of [doomed.apiKey, second.apiKey]) {
      expect(await t.redis.exists(keys.apiKey(hashApiKey(apiKey)))).to.equal(0);
    }
    expect(await t.redis.exists(keys.apiKeyId(doomed.keyId), keys.apiKeyId(second.keyId))).to.equal(0);
    expect(await t.redis.sismember(keys.workspaceIndex(), doomed.workspaceId)).to.equal(0);
    expect((await ops.listWorkspaces()).map((w) => w.id)).not.to.include(doomed.workspaceId);

    expect((await keysMentioning(t.redis, other.workspaceId)).sort()).to.deep.equal(otherBefore);
    expect((await ops.usage(other.workspaceId)).players).to.equal(50);
    expect((await ops.usage(lookalike.workspaceId)).players).to.equal(20);
    expect((await call(t.service, 'GET', '/ping', { key: other.apiKey })).status).to.equal(200);
    expect((await call(t.service, 'GET', '/ping', { key: lookalike.apiKey })).status).to.equal(200);
  });

  it('stops the workspace’s keys at once, even when an instance had them cached', async () => {
    const ws = await newWorkspace(t.redis);
    expect((await call(t.service, 'GET', '/ping', { key: ws.apiKey })).status).to.equal(200);
    await testOps(t.redis).deleteWorkspace(ws.workspaceId);
    expect((await call(t.service, 'GET', '/ping', { key: ws.apiKey })).status).to.equal(401);
  });

  it('can be run again after an interruption and finishes the job', async () => {
    const ops = testOps(t.redis);
    const ws = await newWorkspace(t.redis);
    await seedPlayers(t.redis, ws.workspaceId, 2500);
    const interrupted = await ops
      .deleteWorkspace(ws.workspaceId, {
        onProgress: (p) => {
          if (p.phase === 'players') throw new Error('interrupted');
        },
      })
      .catch((e: unknown) => e);
    expect((interrupted as Error).message).to.equal('interrupted');
    const left = (await keysMentioning(t.redis, ws.workspaceId)).length;
    expect(left).to.be.greaterThan(0).and.lessThan(2500);
    // The workspace is still found, so the operator can simply run the command again.
    expect((await ops.listWorkspaces()).map((w) => w.id)).to.include(ws.workspaceId);

    const second = await ops.deleteWorkspace(ws.workspaceId);
    expect(second.playersDeleted).to.be.greaterThan(0).and.lessThan(2500);
    expect(await keysMentioning(t.redis, ws.workspaceId)).to.deep.equal([]);
    const again = await ops.deleteWorkspace(ws.workspaceId).catch((e: unknown) => e);
    expect((again as { status?: number }).status).to.equal(404);
  });

  it('with force, sweeps what a late request wrote after the workspace was gone', async () => {
    const ops = testOps(t.redis);
    const ws = await newWorkspace(t.redis);
    await ops.deleteWorkspace(ws.workspaceId);
    // What a request authenticated just before the deletion could still write after it.
    await seedPlayers(t.redis, ws.workspaceId, 3);
    expect((await ops.deleteWorkspace(ws.workspaceId).catch((e: { status?: number }) => e) as { status?: number }).status).to.equal(404);
    const swept = await ops.deleteWorkspace(ws.workspaceId, { force: true });
    expect(swept).to.deep.equal({ workspaceId: ws.workspaceId, keysDeleted: 0, playersDeleted: 3 });
    expect(await keysMentioning(t.redis, ws.workspaceId)).to.deep.equal([]);
  });

  it('a last-use flush after the deletion writes nothing back', async () => {
    const ws = await newWorkspace(t.redis);
    await call(t.service, 'GET', '/ping', { key: ws.apiKey });
    expect(t.service.lastUsed.size).to.be.greaterThan(0);
    await testOps(t.redis).deleteWorkspace(ws.workspaceId);
    await t.service.lastUsed.flush();
    expect(await keysMentioning(t.redis, ws.workspaceId)).to.deep.equal([]);
  });
});
