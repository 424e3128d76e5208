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

  it('keeps exact restore points on every master: one per interval, thinned to one an hour into the coarse list', async () => {
    const HOUR = 3_600_000;
    let now = Math.floor((Date.now() - 10 * 24 * HOUR) / HOUR) * HOUR;
    const config = testConfig({ HISTORY_INTERVAL_SECONDS: '300', HISTORY_FINE_HOURS: '1', HISTORY_MAX_VERSIONS: '1000' });
    const ops = new AdminOperations(redis, { actor: 'test', config, clock: () => now });
    const { workspaceId } = await ops.createWorkspace({ name: 'restore points on a cluster' });
    const users = Array.from({ length: 12 }, (_, i) => `p${i}`);
    for (const user of users) {
      // Three intervals of hour 0 (three writes each), then one write two hours later: the
      // points older than the fine window are thinned to the first of their hour.
      now = Math.floor(now / HOUR) * HOUR + HOUR;
      const start = now;
      let value = 0;
      for (let interval = 0; interval < 3; interval++) {
        for (let w = 0; w < 3; w++) {
          now = start + interval * 300_000 + w * 1000;
          await ops.setPlayerValue(workspaceId, user, 'coins', ++value);
        }
      }
      now = start + 2 * HOUR + 5000;
      await ops.setPlayerValue(workspaceId, user, 'coins', ++value);
      // The current version (10), the point of the last write's interval (9), and hour 0's first point (0).
      const history = await ops.playerHistory(workspaceId, user);
      expect(history.versions.map((v) => v.version), user).to.deep.equal([10, 9, 0]);
      const at9 = await ops.playerAtVersion(workspaceId, user, 9);
      expect(at9.data['coins']!.value).to.equal(9);
      const coarse = await redis.llen(keys.playerHistoryCoarse(workspaceId, user));
      expect(coarse, `${user}: thinned into the coarse list`).to.be.greaterThan(0);
      const restored = await ops.restorePlayer(workspaceId, user, 0);
      expect(restored).to.include({ version: 11, deleted: 1 });
    }
  });
});
