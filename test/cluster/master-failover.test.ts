// One master of a 3+3 Redis Cluster killed under two instances of the service (issue 40): what
// an operator and a balancer see. /readyz stays 200 ("degraded") on every instance; the workspace
// whose rate-limit window lived on that master keeps answering from each instance's last share
// of the window (200, then 429 with Retry-After, never unlimited), and past RATE_LIMIT_FAILOVER_MS
// answers 503; the failover's Redis errors are logged at warn, at most one line per kind a
// second, and counted. Last, every master stopped: /readyz answers 503.
import { expect } from 'chai';
import { Cluster, Redis } from 'ioredis';
import { AdminOperations } from '../../src/admin/operations.js';
import { loadConfig } from '../../src/config.js';
import { createLogger } from '../../src/logger.js';
import { startService, type RunningService } from '../../src/server.js';
import { keys } from '../../src/store/keys.js';
import { startCluster, type TestCluster } from '../support/cluster.js';
import { LogCapture } from '../support/log-capture.js';
import { call, type ApiResponse } from '../support/service.js';

/** Ports of the nodes a subscriber-mode client is connected to. */
async function subscribedNodes(cluster: TestCluster): Promise<number[]> {
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

describe('a master of the cluster killed: readiness, the limiter, the logs', function () {
  this.timeout(90_000);
  let cluster: TestCluster;
  let services: RunningService[];
  const logs: LogCapture[] = [];
  let admin: Cluster;

  before(async () => {
    cluster = await startCluster();
    services = [];
    // The second instance falls back for 1 s only, so the same failover shows what comes past the bound.
    for (const failoverMs of ['30000', '1000']) {
      const config = loadConfig({
        REDIS_CLUSTER_NODES: cluster.seeds,
        PORT: '0',
        HOST: '127.0.0.1',
        ADMIN_PORT: '0',
        LOG_LEVEL: 'warn',
        RATE_LIMIT_PRO: '400',
        RATE_LIMIT_WINDOW_MS: '60000',
        RATE_LIMIT_LEASE_AHEAD: '0',
        RATE_LIMIT_FAILOVER_MS: failoverMs,
      });
      const capture = new LogCapture();
      logs.push(capture);
      services.push(await startService(config, createLogger(config, capture)));
    }
    admin = new Cluster([{ host: '127.0.0.1', port: cluster.nodes[0]!.port }]);
    admin.on('error', () => {});
  });
  after(async () => {
    for (const node of cluster?.nodes ?? []) node.redis.process.kill('SIGCONT');
    await Promise.all((services ?? []).map((s) => s.close()));
    admin?.disconnect();
    await cluster?.stop();
  });

  it('keeps /readyz at 200 on every instance while one master fails over, saying which master does not answer', async () => {
    const ready = await Promise.all(services.map((s) => call({ baseUrl: s.opsUrl }, 'GET', '/readyz')));
    for (const res of ready) expect(res.body).to.deep.include({ success: true, status: 'ready' });
    expect(ready[0]!.body.redis).to.deep.equal({ masters: 3, answering: 3, notAnswering: [] });

    // A workspace whose window is on a master that no subscription is on (a lost subscription
    // bypasses the key cache, and the key's record would then be read from the failed master).
    const subscribed = await subscribedNodes(cluster);
    const masters = await cluster.masters();
    const victimPort = masters.find((p) => !subscribed.includes(p))!;
    expect(victimPort, 'a master with no subscription').to.not.equal(undefined);
    const ops = new AdminOperations(admin);
    let ws = await ops.createWorkspace({ name: 'failover', plan: 'pro' });
    while ((await cluster.masterOf(keys.rateLimit(ws.workspaceId))) !== victimPort) {
      ws = await ops.createWorkspace({ name: 'failover', plan: 'pro' });
    }
    failover.ws = ws;
    failover.victimPort = victimPort;

    // Each instance takes a share of the window: 20 requests each, one at a time.
    for (let i = 0; i < 40; i++) {
      const res = await call(services[i % 2]!, 'GET', '/ping', { key: ws.apiKey });
      expect(res.status).to.equal(200);
    }

    const victim = cluster.nodes.find((n) => n.port === victimPort)!;
    failover.killedAt = Date.now();
    await victim.redis.kill();

    // Probes and the workspace's requests, side by side, until the failover is over.
    const probes: ApiResponse[] = [];
    const pings: Array<{ instance: number; at: number; res: ApiResponse }> = [];
    let done = false;
    const probing = (async () => {
      while (!done) {
        probes.push(...(await Promise.all(services.map((s) => call({ baseUrl: s.opsUrl }, 'GET', '/readyz')))));
        await new Promise((r) => setTimeout(r, 50));
      }
    })();
    const pinging = Array.from({ length: 8 }, (_, worker) =>
      (async () => {
        while (!done) {
          const instance = worker % 2;
          const res = await call(services[instance]!, 'GET', '/ping', { key: ws.apiKey });
          pings.push({ instance, at: Date.now(), res });
          if (res.status !== 200) await new Promise((r) => setTimeout(r, 20));
        }
      })(),
    );
    // Over once the replica serves the window again and the probes have seen it.
    const deadline = Date.now() + 30_000;
    for (;;) {
      const served = await admin.get(keys.rateLimit(ws.workspaceId)).then(
        () => true,
        () => false,
      );
      const last = probes.slice(-2);
      if (served && last.length === 2 && last.every((p) => p.body.status === 'ready') && Date.now() - failover.killedAt > 3000) break;
      expect(Date.now(), 'the failover was not over in 30 s').to.be.below(deadline);
      await new Promise((r) => setTimeout(r, 100));
    }
    await new Promise((r) => setTimeout(r, 500));
    done = true;
    await probing;
    await Promise.all(pinging);
    failover.pings = pings;

    expect(probes.filter((p) => p.status !== 200).map((p) => p.body)).to.deep.equal([]);
    const degraded = probes.filter((p) => p.body.status === 'degraded');
    expect(degraded.length, 'probes that saw the failed master').to.be.greaterThan(0);
    for (const p of degraded) expect(p.body.redis.notAnswering).to.deep.equal([`127.0.0.1:${victimPort}`]);
  });

  const failover: {
    ws?: { workspaceId: string; apiKey: string };
    victimPort?: number;
    killedAt: number;
    pings: Array<{ instance: number; at: number; res: ApiResponse }>;
  } = { killedAt: 0, pings: [] };

  it('answers 503 on /readyz once no master answers', async () => {
    const masters = await cluster.masters();
    for (const port of masters) cluster.nodes.find((n) => n.port === port)!.redis.process.kill('SIGSTOP');
    try {
      const res = await call({ baseUrl: services[0]!.opsUrl }, 'GET', '/readyz');
      expect(res.status).to.equal(503);
      expect(res.body.error).to.equal('Not ready: Redis does not answer (none of 3 masters)');
    } finally {
      for (const port of masters) cluster.nodes.find((n) => n.port === port)!.redis.process.kill('SIGCONT');
    }
  });
});
