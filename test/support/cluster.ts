// Starts a local Redis Cluster of real redis-server processes for tests: N masters with one
// replica each, on free ports below the system's ephemeral range (the cluster bus listens on port + 10000),
// each node with a temp folder of its own. It never touches any other Redis.
import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { Cluster, Redis } from 'ioredis';
import { AdminOperations, type CreatedWorkspace } from '../../src/admin/operations.js';
import { startLocalRedis, type LocalRedis } from '../../src/dev/local-redis.js';
import { hashApiKey } from '../../src/domain/api-key.js';
import { keys } from '../../src/store/keys.js';

const run = promisify(execFile);

export interface ClusterNode {
  readonly port: number;
  readonly dataDir: string;
  redis: LocalRedis;
}

export interface TestCluster {
  readonly nodes: ClusterNode[];
  /** `host:port,...` for REDIS_CLUSTER_NODES. */
  readonly seeds: string;
  /** Ports of the nodes that are masters now, as the cluster itself reports. */
  masters(): Promise<number[]>;
  /** Port of the master that now serves the slot of `key`. */
  masterOf(key: string): Promise<number>;
  /** Resolves once every live node reports cluster_state:ok, every replica's link is up, and every node sees the replicas as replicas. */
  waitHealthy(timeoutMs?: number): Promise<void>;
  /** A cluster client for the test's own reads and writes (seeded by the first node; errors ignored): disconnect it after. */
  client(): Cluster;
  stop(): Promise<void>;
}

function portFree(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const server = createServer();
    server.once('error', () => resolve(false));
    server.listen(port, '127.0.0.1', () => server.close(() => resolve(true)));
  });
}

/**
 * The lowest port the system hands out to outgoing connections and `listen(0)`: a port of that
 * range found free can be taken by another test's connection before redis-server binds it (a full
 * run lost a cluster so: a node exited with code 1).
 */
function ephemeralLow(): number {
  try {
    const low = Number(readFileSync('/proc/sys/net/ipv4/ip_local_port_range', 'utf8').trim().split(/\s+/)[0]);
    return Number.isInteger(low) && low > 0 ? low : 32_768;
  } catch {
    return 32_768;
  }
}

/** `count` consecutive ports, each free together with its bus port (+10000), all below the ephemeral range. */
async function freePortBlock(count: number): Promise<number[]> {
  const highest = Math.max(20_000 + count, ephemeralLow() - 10_000 - count);
  for (let attempt = 0; attempt < 200; attempt++) {
    const base = 20_000 + Math.floor(Math.random() * (highest - 20_000 - count));
    const ports = Array.from({ length: count }, (_, i) => base + i);
    let ok = true;
    for (const port of ports) {
      if (!(await portFree(port)) || !(await portFree(port + 10_000))) {
        ok = false;
        break;
      }
    }
    if (ok) return ports;
  }
  throw new Error('no block of free ports for a test cluster');
}

async function info(port: number, section: string): Promise<string> {
  const probe = new Redis({ port, host: '127.0.0.1', lazyConnect: true, retryStrategy: () => null, maxRetriesPerRequest: 0 });
  probe.on('error', () => {});
  try {
    await probe.connect();
    return section === 'cluster' ? await probe.cluster('INFO') : await probe.info(section);
  } finally {
    probe.disconnect();
  }
}

async function clusterNodesTable(port: number): Promise<string[][]> {
  const probe = new Redis({ port, host: '127.0.0.1', lazyConnect: true, retryStrategy: () => null, maxRetriesPerRequest: 0 });
  probe.on('error', () => {});
  try {
    await probe.connect();
    const text = (await probe.cluster('NODES')) as string;
    return text.trim().split('\n').map((line) => line.split(' '));
  } finally {
    probe.disconnect();
  }
}

export interface ClusterOptions {
  readonly masters?: number;
  readonly appendfsync?: 'always' | 'everysec' | 'no';
  /**
   * Redis's default `cluster-require-full-coverage yes`: while one master's slots are uncovered
   * (from its FAIL flag to its replica's promotion) every master answers CLUSTERDOWN. Off here,
   * as docs/deployment.md asks of a production cluster (test/cluster/full-coverage.test.ts).
   */
  readonly requireFullCoverage?: boolean;
}

export async function startCluster(options: ClusterOptions = {}): Promise<TestCluster> {
  const masters = options.masters ?? 3;
  const ports = await freePortBlock(masters * 2);
  const root = mkdtempSync(join(tmpdir(), 'pds-test-cluster-'));
  const nodes: ClusterNode[] = [];
  const stop = async () => {
    await Promise.all(nodes.map((n) => n.redis.kill()));
    rmSync(root, { recursive: true, force: true });
  };
  try {
    for (const port of ports) {
      const dataDir = join(root, String(port));
      const redis = await startLocalRedis({
        dataDir,
        port,
        appendfsync: options.appendfsync ?? 'everysec',
        extraArgs: [
          '--cluster-enabled', 'yes', '--cluster-node-timeout', '2000', '--repl-diskless-sync-delay', '0',
          '--cluster-require-full-coverage', options.requireFullCoverage ? 'yes' : 'no',
        ],
      });
      nodes.push({ port, dataDir, redis });
    }
    await run('redis-cli', [
      '--cluster', 'create',
      ...ports.map((p) => `127.0.0.1:${p}`),
      '--cluster-replicas', '1',
      '--cluster-yes',
    ]);
  } catch (err) {
    await stop();
    throw err;
  }

  const live = () => nodes.filter((n) => n.redis.process.exitCode === null && n.redis.process.signalCode === null);
  const cluster: TestCluster = {
    nodes,
    seeds: ports.map((p) => `127.0.0.1:${p}`).join(','),
    client() {
      const client = new Cluster([{ host: '127.0.0.1', port: nodes[0]!.port }]);
      client.on('error', () => {});
      return client;
    },
    async masters() {
      const table = await clusterNodesTable(live()[0]!.port);
      // A master serves slots (fields 9 on): right after the cluster's creation a node's view
      // may still call a new replica "master", with none (a test picked one as the master to stop).
      return table
        .filter((f) => f[2]!.includes('master') && !f[2]!.includes('fail') && f.length > 8)
        .map((f) => Number(f[1]!.split('@')[0]!.split(':').at(-1)));
    },
    async masterOf(key: string) {
      const probe = new Redis({ port: live()[0]!.port, host: '127.0.0.1', maxRetriesPerRequest: 0 });
      try {
        const slot = (await probe.cluster('KEYSLOT', key)) as number;
        const slots = (await probe.cluster('SLOTS')) as unknown as Array<[number, number, [string, number]]>;
        const range = slots.find(([from, to]) => slot >= from && slot <= to);
        if (!range) throw new Error(`slot ${slot} is not served`);
        return range[2][1];
      } finally {
        probe.disconnect();
      }
    },
    async waitHealthy(timeoutMs = 30_000) {
      const deadline = Date.now() + timeoutMs;
      for (;;) {
        let healthy = true;
        try {
          for (const node of live()) {
            if (!/cluster_state:ok/.test(await info(node.port, 'cluster'))) healthy = false;
            const replication = await info(node.port, 'replication');
            if (/role:slave/.test(replication) && !/master_link_status:up/.test(replication)) healthy = false;
            // Every node's view has caught up with the replicas: no node it counts as a master without slots.
            const view = await clusterNodesTable(node.port);
            if (view.some((f) => f[2]!.includes('master') && !f[2]!.includes('fail') && f.length <= 8)) healthy = false;
            if (!healthy) break;
          }
        } catch {
          healthy = false;
        }
        if (healthy) return;
        if (Date.now() > deadline) throw new Error(`the test cluster was not healthy within ${timeoutMs} ms`);
        await new Promise((r) => setTimeout(r, 200));
      }
    },
    stop,
  };
  try {
    await cluster.waitHealthy();
  } catch (err) {
    await stop();
    throw err;
  }
  return cluster;
}

/** CROSSSLOT errors every node of the cluster has answered so far (INFO errorstats): a script or command that spanned slots. */
export async function crossSlotErrors(cluster: TestCluster): Promise<number> {
  let total = 0;
  for (const node of cluster.nodes) {
    const redis = new Redis({ port: node.port, host: '127.0.0.1' });
    const stats = await redis.info('errorstats');
    redis.disconnect();
    total += Number(/errorstat_CROSSSLOT:count=(\d+)/.exec(stats)?.[1] ?? 0);
  }
  return total;
}

/** Ports of the nodes a subscriber-mode client is connected to (a stopped one would stall a service's key cache). */
export async function subscribedNodes(cluster: TestCluster): Promise<number[]> {
  const ports: number[] = [];
  for (const node of cluster.nodes) {
    if (node.redis.process.exitCode !== null || node.redis.process.signalCode !== null) continue;
    const probe = new Redis({ port: node.port, host: '127.0.0.1', maxRetriesPerRequest: 0 });
    const list = (await probe.client('LIST')) as string;
    probe.disconnect();
    if (list.split('\n').some((line) => / sub=[1-9]/.test(line))) ports.push(node.port);
  }
  return ports;
}

/**
 * A master to stop or kill that holds only players of a new workspace: no service subscription
 * (a stopped one would stall the key cache), not the workspace's own keys (its window, totals)
 * nor its API key's record (read again whenever the key cache is).
 */
export async function workspaceOffVictim(cluster: TestCluster, admin: Cluster, name: string): Promise<{ victim: ClusterNode; ws: CreatedWorkspace }> {
  const subscribed = await subscribedNodes(cluster);
  const port = (await cluster.masters()).find((p) => !subscribed.includes(p));
  if (port === undefined) throw new Error('no master without a subscription');
  const onVictim = async (key: string) => (await cluster.masterOf(key)) === port;
  const ops = new AdminOperations(admin);
  let ws = await ops.createWorkspace({ name, plan: 'pro' });
  while ((await onVictim(keys.workspace(ws.workspaceId))) || (await onVictim(keys.apiKey(hashApiKey(ws.apiKey))))) {
    ws = await ops.createWorkspace({ name, plan: 'pro' });
  }
  return { victim: cluster.nodes.find((n) => n.port === port)!, ws };
}
