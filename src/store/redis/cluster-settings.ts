// The Redis Cluster settings the service depends on, checked once at start. Redis's default
// `cluster-require-full-coverage yes` makes every master answer CLUSTERDOWN for every key while
// one master's slots are uncovered (from its FAIL flag to its replica's promotion, about a
// second), so a failover fails the players of the healthy masters too (the fleet test of issue
// 40; test-long/full-coverage.test.ts, and test/cluster/full-coverage.test.ts for the warning). The service only reads the setting (CONFIG GET, never
// SET: it does not reconfigure a Redis it did not start) and says so at warn; a node that refuses
// CONFIG (a managed service's renamed command) is passed over.
import { Cluster, Redis } from 'ioredis';
import type { Logger } from '../../logger.js';
import type { RedisClient } from './redis.js';

/**
 * The masters' `host:port` whose `cluster-require-full-coverage` is `yes`; [] on a single Redis.
 * Asked on a short connection of its own to each master, so that the cluster client's own
 * connections are left as the client made them.
 */
export async function fullCoverageMasters(client: RedisClient, timeoutMs = 2000): Promise<string[]> {
  if (!(client instanceof Cluster)) return [];
  const found: string[] = [];
  await Promise.all(
    client.nodes('master').map(async (node) => {
      const { host, port } = node.options;
      const probe = new Redis({ host, port, lazyConnect: true, enableOfflineQueue: false, maxRetriesPerRequest: 0, connectTimeout: timeoutMs, commandTimeout: timeoutMs, retryStrategy: () => null });
      probe.on('error', () => {});
      try {
        await probe.connect();
        const reply = (await probe.config('GET', 'cluster-require-full-coverage')) as unknown as string[];
        if (reply[1] === 'yes') found.push(`${host}:${port}`);
      } catch {
        // CONFIG refused or the node not answering: nothing to say about it.
      } finally {
        probe.disconnect();
      }
    }),
  );
  return found.sort();
}

/** Warns when masters require full coverage (see above). */
export async function warnOfFullCoverage(client: RedisClient, logger: Logger): Promise<void> {
  const masters = await fullCoverageMasters(client);
  if (masters.length === 0) return;
  logger.warn(
    { masters, setting: 'cluster-require-full-coverage' },
    'Redis Cluster masters run with cluster-require-full-coverage yes: while one master fails over, every master refuses every key (CLUSTERDOWN), so players on healthy masters fail too; set it to no on every node (docs/deployment.md)',
  );
}
