// The service warns at start of Redis Cluster masters that run with Redis's default
// `cluster-require-full-coverage yes`: with it, every master answers CLUSTERDOWN from the moment
// one master is flagged FAIL until its replica is promoted, so players of healthy masters fail in
// every failover (test-long/full-coverage.test.ts kills a master under writes to show it).
import { expect } from 'chai';
import { createLogger } from '../../src/logger.js';
import { startService } from '../../src/server.js';
import { startCluster } from '../support/cluster.js';
import { LogCapture } from '../support/log-capture.js';
import { testConfig } from '../support/service.js';

describe('the service warns at start of masters that require full coverage', function () {
  this.timeout(60_000);

  it('names them on a cluster left at Redis\'s default, and says nothing once it is off', async () => {
    for (const requireFullCoverage of [true, false]) {
      const cluster = await startCluster({ requireFullCoverage });
      const capture = new LogCapture();
      const config = testConfig({ REDIS_CLUSTER_NODES: cluster.seeds, LOG_LEVEL: 'warn' });
      const service = await startService(config, createLogger(config, capture));
      try {
        const warned = capture.lines.map((l) => JSON.parse(l) as Record<string, any>).find((l) => l['setting'] === 'cluster-require-full-coverage');
        if (requireFullCoverage) {
          expect(warned?.['level'], 'a warn line').to.equal(40);
          expect(warned?.['masters']).to.have.length(3);
        } else {
          expect(warned, 'no line').to.equal(undefined);
        }
      } finally {
        await service.close();
        await cluster.stop();
      }
    }
  });
});
