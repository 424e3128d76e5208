// The admin operations that walk the keyspace, on a real three-master Redis Cluster: counting
// and deleting a workspace's players must reach every master, not just one.
import { expect } from 'chai';
import type { Cluster } from 'ioredis';
import { AdminOperations } from '../../src/admin/operations.js';
import { encodeEntry } from '../../src/domain/entry.js';
import { keys } from '../../src/store/keys.js';
import { KeyUsageStore } from '../../src/store/workspaces/key-usage.js';
import { connectRedis, createRedis } from '../../src/store/redis/redis.js';
import { masters } from '../../src/store/redis/scan.js';
import { startCluster, type TestCluster } from '../support/cluster.js';

async function countOnNode(node: ReturnType<Cluster['nodes']>[number], pattern: string): Promise<number> {
  let cursor = '0';
  let n = 0;
  do {
    const [next, page] = await node.scan(cursor, 'MATCH', pattern, 'COUNT', 1000);
    cursor = next;
    n += page.length;
  } while (cursor !== '0');
  return n;
}

describe('admin operations on Redis Cluster', function () {
  this.timeout(60_000);
  let cluster: TestCluster | undefined;
  let redis: Cluster;

  before(async function () {
    cluster = await startCluster();
    redis = createRedis({ clusterNodes: cluster.nodes.map((n) => ({ host: '127.0.0.1', port: n.port })), commandTimeoutMs: 5000, connectTimeoutMs: 5000 }) as Cluster;
    await connectRedis(redis, 10_000);
  });
  after(async () => {
    redis?.disconnect();
    await cluster?.stop();
  });

  async function seed(workspaceId: string, count: number): Promise<void> {
    for (let start = 0; start < count; start += 500) {
      const batch = [];
      for (let i = start; i < Math.min(count, start + 500); i++) {
        batch.push(redis.hset(keys.player(workspaceId, String(i)), 'coins', encodeEntry(String(i), 1)));
      }
      await Promise.all(batch);
    }
  }

  it('counts and deletes players spread over every master, and leaves the other workspace alone', async () => {
    const ops = new AdminOperations(redis, { actor: 'test' });
    const doomed = await ops.createWorkspace({ name: 'doomed' });
    const kept = await ops.createWorkspace({ name: 'kept' });
    await seed(doomed.workspaceId, 2000);
    await seed(kept.workspaceId, 300);
    await new KeyUsageStore(redis).record(new Map([[doomed.workspaceId, [doomed.keyId, String(Date.now())]]]));

    const nodes = masters(redis);
    expect(nodes).to.have.length(3);
    const perNode = await Promise.all(nodes.map((n) => countOnNode(n, keys.playerPattern(doomed.workspaceId))));
    expect(perNode.every((n) => n > 0), `players per master: ${perNode.join(', ')}`).to.equal(true);
    expect((await ops.usage(doomed.workspaceId)).players).to.equal(2000);
    expect((await ops.listKeys(doomed.workspaceId))[0]!.lastUsedAt).to.be.a('string');

    const result = await ops.deleteWorkspace(doomed.workspaceId);
    expect(result.playersDeleted).to.equal(2000);
    const left = await Promise.all(nodes.map((n) => countOnNode(n, `*${doomed.workspaceId}*`)));
    expect(left).to.deep.equal([0, 0, 0]);
    expect((await ops.usage(kept.workspaceId)).players).to.equal(300);
    expect(await ops.exportPlayer(kept.workspaceId, 7)).to.have.nested.property('data.coins.value', 7);
  });

  it('lists players spread over every master (backfill, pages, rows) and reads the overview from every master', async () => {
    const ops = new AdminOperations(redis, { actor: 'test' });
    const ws = await ops.createWorkspace({ name: 'listed on a cluster' });
    await seed(ws.workspaceId, 300);
    const indexed = await ops.indexPlayers(ws.workspaceId);
    expect(indexed).to.include({ seen: 300, listed: 300 });
    await ops.setPlayerValue(ws.workspaceId, 'newest', 'coins', 1);
    const first = await ops.listPlayers(ws.workspaceId, { limit: 100 });
    expect(first.players[0]).to.include({ userId: 'newest', version: 1, keys: 1 });
    let seen = first.players.length;
    for (let cursor = first.next; cursor !== null; ) {
      const page = await ops.listPlayers(ws.workspaceId, { limit: 100, cursor });
      seen += page.players.length;
      cursor = page.next;
    }
    expect(seen).to.equal(301);
    const overview = await ops.overview();
    expect(overview.memory.nodes).to.equal(3);
    expect(overview.minutes).to.have.length(60);
  });
});

