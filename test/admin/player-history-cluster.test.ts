// History and restore on a real three-master Redis Cluster: a player's data, restore points and
// session share one slot, so the snapshot (one MULTI) and the restore's write work for players
// on every master.
import { expect } from 'chai';
import type { Cluster } from 'ioredis';
import { AdminOperations } from '../../src/admin/operations.js';
import { AppError } from '../../src/errors.js';
import { keys } from '../../src/store/keys.js';
import { connectRedis, createRedis } from '../../src/store/redis/redis.js';
import { startCluster, type TestCluster } from '../support/cluster.js';
import { testConfig } from '../support/service.js';

describe('player history and restore on Redis Cluster', function () {
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

  it('lists, shows and restores players on every master, and force ends a session there', async () => {
    // Each reading of the clock is one restore interval later: every write opens a restore point.
    let at = Date.now() - 3_600_000;
    const ops = new AdminOperations(redis, { actor: 'test', config: testConfig({ HISTORY_MAX_VERSIONS: '50' }), clock: () => (at += 300_000) });
    const { workspaceId } = await ops.createWorkspace({ name: 'history on a cluster' });
    const users = Array.from({ length: 12 }, (_, i) => `u${i}`);

    for (const user of users) {
      await ops.setPlayerValue(workspaceId, user, 'coins', 10);
      await ops.setPlayerValue(workspaceId, user, 'gem', user);
      await ops.deletePlayerData(workspaceId, user);
      await ops.setPlayerValue(workspaceId, user, 'coins', 1);
    }
    await ops.players.session(workspaceId, 'u0', { action: 'acquire', sessionId: 'ses_cluster_history', owner: 'job-c', ttlMs: 60_000 });

    const masters = new Set<string>();
    for (const user of users) {
      const history = await ops.playerHistory(workspaceId, user);
      expect(history.versions.map((v) => v.version), user).to.deep.equal([4, 3, 2, 1, 0]);
      expect(history.versions.map((v) => v.kind)).to.deep.equal([null, 'admin-set', 'admin-delete', 'admin-set', 'admin-set']);
      const at2 = await ops.playerAtVersion(workspaceId, user, 2);
      expect(Object.fromEntries(Object.entries(at2.data).map(([k, e]) => [k, e.value]))).to.deep.equal({ coins: 10, gem: user });

      if (user === 'u0') {
        const refused = await ops.restorePlayer(workspaceId, user, 2).catch((e: unknown) => e);
        expect(refused).to.be.instanceOf(AppError);
        expect((refused as AppError).code).to.equal('SESSION_LOCKED');
      }
      const restored = await ops.restorePlayer(workspaceId, user, 2, { force: user === 'u0' });
      expect(restored).to.include({ version: 5, set: 2, deleted: 0 });
      if (user === 'u0') expect(restored.endedSession).to.deep.equal({ sessionId: 'ses_cluster_history', owner: 'job-c' });
      expect((await ops.exportPlayer(workspaceId, user)).data['gem']!.value).to.equal(user);

      const slot = Number(await redis.cluster('KEYSLOT', keys.player(workspaceId, user)));
      const owner = (redis.slots[slot] ?? [])[0];
      if (owner) masters.add(owner);
    }
    expect(masters.size, 'players on every master').to.equal(3);
  });
});
