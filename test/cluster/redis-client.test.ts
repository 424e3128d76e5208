// The service's cluster client (src/store/redis/redis.ts) on a real Redis Cluster: ioredis's
// auto-pipelining is off, and each node's connection sends a turn's commands in one write
// (write-batching.ts); nodeOf names the master that serves a key, as the cluster says.
// Auto-pipelining grouped a turn's commands by the node list of their slots and checked the
// grouping again when the batch left: a slot table refreshed in between (a replica that
// joined, a MOVED, a failover) failed the whole batch unsent.
import { expect } from 'chai';
import type { Cluster, Redis } from 'ioredis';
import { createRedis, nodeOf } from '../../src/store/redis/redis.js';
import { startCluster, type TestCluster } from '../support/cluster.js';
import { countWrites } from '../support/socket-writes.js';

describe('commands on a Redis Cluster leave per node, a turn at a time (3 masters + 3 replicas)', function () {
  this.timeout(60_000);
  let cluster: TestCluster;
  let redis: Cluster;
  const prefix = `test:cluster-batching:${process.pid}:`;

  before(async () => {
    cluster = await startCluster();
    redis = createRedis({ clusterNodes: cluster.seeds.split(',').map((s) => ({ host: s.split(':')[0]!, port: Number(s.split(':')[1]) })), commandTimeoutMs: 5000, connectTimeoutMs: 5000 }) as Cluster;
    await redis.connect();
  });
  after(async () => {
    redis?.disconnect();
    await cluster?.stop();
  });

  /**
   * The slot table ioredis keeps: node keys per slot (the master first), and the group of each
   * slot's node list that its auto-pipelining compares when a batch leaves; a refresh (or a
   * MOVED) replaces both.
   */
  const table = () => redis as unknown as { slots: string[][]; _groupsBySlot: Array<number | undefined> };
  const slots = () => table().slots;
  const slotOf = async (key: string) => Number(await redis.cluster('KEYSLOT', key));

  it('answers every command of a turn during which the slot table changed', async () => {
    // Two keys of different slots on the same master: auto-pipelining put them in one batch.
    const a = `${prefix}a`;
    const slotA = await slotOf(a);
    let b = '';
    let slotB = -1;
    for (let i = 0; slotB < 0; i++) {
      const slot = await slotOf(`${prefix}b${i}`);
      if (slot !== slotA && slots()[slot]![0] === slots()[slotA]![0]) [b, slotB] = [`${prefix}b${i}`, slot];
    }
    // Right after start-up the table often lists masters alone, and the next refresh (every 5 s)
    // adds their replicas: what failed batches in test/cluster/leaderboards-cluster.test.ts.
    const [before, group] = [slots()[slotB]!, table()._groupsBySlot[slotB]];
    const replies = Promise.all([redis.set(a, '1'), redis.set(b, '2')]);
    // What a refresh does to a slot whose node list changed (ioredis cluster/index.js, refreshSlotsCache).
    slots()[slotB] = [before[0]!, 'a-replica-that-joined:1'];
    table()._groupsBySlot[slotB] = 16_385;
    try {
      expect(await replies).to.deep.equal(['OK', 'OK']);
    } finally {
      slots()[slotB] = before;
      table()._groupsBySlot[slotB] = group;
    }
    expect(await redis.mget(a)).to.deep.equal(['1']);
  });

  it('names the master that serves a key as the cluster does (nodeOf, from the client\'s slot table)', async () => {
    await redis.ping();
    for (let i = 0; i < 60; i++) {
      const key = `${prefix}node:${i}`;
      expect(nodeOf(redis, key), key).to.equal(`127.0.0.1:${await cluster.masterOf(key)}`);
    }
    expect(nodeOf(createRedis({ url: 'redis://127.0.0.1:1', commandTimeoutMs: 100, connectTimeoutMs: 100 }), 'k'), 'a single server').to.equal('');
  });

  it("sends the commands of one turn to a node in one socket write, each reply to its own command", async () => {
    const key = (i: number) => `${prefix}{one-slot}:${i}`;
    const master = slots()[await slotOf(key(0))]![0]!;
    const node = redis.nodes('master').find((n) => `${n.options.host}:${n.options.port}` === master) as Redis;
    expect(node, 'the connection to the slot master').to.not.equal(undefined);
    await node.ping(); // ready, its socket made
    const writes = countWrites(node);
    const replies = await Promise.all(Array.from({ length: 40 }, (_, i) => (i % 2 === 0 ? redis.set(key(i), String(i)) : redis.get(key(i - 1)))));
    replies.forEach((reply, i) => expect(reply).to.equal(i % 2 === 0 ? 'OK' : String(i - 1)));
    expect(writes.count).to.equal(1);
  });
});
