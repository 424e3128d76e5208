// A throwaway three-master Redis Cluster on free ports, each node with its own temp folder,
// for tests that must prove something works across masters. Needs redis-server and redis-cli.
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { Redis } from 'ioredis';
import { startLocalRedis, type LocalRedis } from '../../src/dev/local-redis.js';

const run = promisify(execFile);

export interface TestCluster {
  readonly nodes: readonly { host: string; port: number }[];
  stop(): Promise<void>;
}

/** Whether this machine can run a throwaway cluster (redis-server and redis-cli on the PATH). */
export async function clusterToolsAvailable(): Promise<boolean> {
  try {
    await run('redis-server', ['--version']);
    await run('redis-cli', ['--version']);
    return true;
  } catch {
    return false;
  }
}

async function waitForClusterOk(ports: readonly number[], timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const states = await Promise.all(
      ports.map(async (port) => {
        const probe = new Redis({ port, host: '127.0.0.1', maxRetriesPerRequest: 0 });
        try {
          return /cluster_state:ok/.test(await probe.cluster('INFO'));
        } finally {
          probe.disconnect();
        }
      }),
    );
    if (states.every(Boolean)) return;
    if (Date.now() > deadline) throw new Error('the test cluster did not reach cluster_state:ok');
    await new Promise((r) => setTimeout(r, 100));
  }
}

export async function startTestCluster(masters = 3): Promise<TestCluster> {
  const root = mkdtempSync(join(tmpdir(), 'pds-test-cluster-'));
  const servers: LocalRedis[] = [];
  try {
    for (let i = 0; i < masters; i++) {
      servers.push(
        await startLocalRedis({
          dataDir: join(root, `node${i}`),
          appendonly: false,
          extraArgs: ['--cluster-enabled', 'yes', '--cluster-config-file', 'nodes.conf', '--cluster-node-timeout', '2000'],
        }),
      );
    }
    const addresses = servers.map((s) => `127.0.0.1:${s.port}`);
    await run('redis-cli', ['--cluster', 'create', ...addresses, '--cluster-replicas', '0', '--cluster-yes']);
    await waitForClusterOk(
      servers.map((s) => s.port),
      15_000,
    );
  } catch (err) {
    await Promise.all(servers.map((s) => s.kill()));
    rmSync(root, { recursive: true, force: true });
    throw err;
  }
  return {
    nodes: servers.map((s) => ({ host: '127.0.0.1', port: s.port })),
    async stop() {
      await Promise.all(servers.map((s) => s.stop()));
      rmSync(root, { recursive: true, force: true });
    },
  };
}
