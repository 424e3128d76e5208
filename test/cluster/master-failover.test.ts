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
import { startCluster, subscribedNodes, type TestCluster } from '../support/cluster.js';
import { LogCapture } from '../support/log-capture.js';
import { call, type ApiResponse } from '../support/service.js';

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
        RATE_LIMIT_PRO: '100',
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

  /** What the failover of the first test left for the others to check. */
  const failover = {
    ws: undefined as string | undefined,
    killedAt: 0,
    probes: [] as Array<{ instance: number; at: number; res: ApiResponse }>,
    reads: [] as Array<{ instance: number; at: number; res: ApiResponse; limiterOnly: boolean }>,
  };

  it('keeps /readyz at 200 on every instance while one master fails over, saying which master does not answer', async () => {
    const ready = await Promise.all(services.map((s) => call({ baseUrl: s.opsUrl }, 'GET', '/readyz')));
    for (const res of ready) expect(res.body).to.deep.include({ success: true, status: 'ready' });
    expect(ready[0]!.body.redis).to.deep.equal({ masters: 3, answering: 3, notAnswering: [] });

    // A workspace whose window is on a master that no subscription is on (a lost subscription
    // bypasses the key cache, and the workspace's record would then be read from the failed
    // master), read through a player on another master.
    const subscribed = await subscribedNodes(cluster);
    const masters = await cluster.masters();
    const victimPort = masters.find((p) => !subscribed.includes(p))!;
    expect(victimPort, 'a master with no subscription').to.not.equal(undefined);
    const ops = new AdminOperations(admin);
    let ws = await ops.createWorkspace({ name: 'failover', plan: 'pro' });
    while ((await cluster.masterOf(keys.rateLimit(ws.workspaceId))) !== victimPort) {
      ws = await ops.createWorkspace({ name: 'failover', plan: 'pro' });
    }
    failover.ws = ws.workspaceId;
    let user = 0;
    while ((await cluster.masterOf(keys.player(ws.workspaceId, `u${user}`))) === victimPort) user++;
    const read = `/data?userId=u${user}&key=coins`;
    expect((await call(services[0]!, 'POST', '/data/set', { key: ws.apiKey, body: { userId: `u${user}`, key: 'coins', value: 1 } })).status).to.equal(200);

    // Each instance takes its share of the window: 20 requests each, one at a time.
    for (let i = 0; i < 40; i++) expect((await call(services[i % 2]!, 'GET', read, { key: ws.apiKey })).status).to.equal(200);

    const victim = cluster.nodes.find((n) => n.port === victimPort)!;
    failover.killedAt = Date.now();
    await victim.redis.kill();

    // Probes and the workspace's reads, side by side, until the failover is over.
    let done = false;
    const probing = (async () => {
      while (!done) {
        const answers = await Promise.all(services.map((s) => call({ baseUrl: s.opsUrl }, 'GET', '/readyz')));
        const at = Date.now();
        answers.forEach((res, instance) => failover.probes.push({ instance, at, res }));
        await new Promise((r) => setTimeout(r, 50));
      }
    })();
    // Most workers send a read the route refuses 400 (no userId) once the limiter has let it
    // through: its status is the limiter's verdict alone (400 let through, 429 refused, 503
    // failed), whatever the players' masters do. Two send real reads of a player on another master.
    const reading = Array.from({ length: 8 }, (_, worker) =>
      (async () => {
        while (!done) {
          const instance = worker % 2;
          const limiterOnly = worker < 6;
          const res = await call(services[instance]!, 'GET', limiterOnly ? '/data?key=coins' : read, { key: ws.apiKey });
          failover.reads.push({ instance, at: Date.now(), res, limiterOnly });
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
      const last = failover.probes.slice(-2);
      if (served && last.length === 2 && last.every((p) => p.res.body.status === 'ready') && Date.now() - failover.killedAt > 3000) break;
      expect(Date.now(), 'the failover was not over in 30 s').to.be.below(deadline);
      await new Promise((r) => setTimeout(r, 100));
    }
    await new Promise((r) => setTimeout(r, 500));
    done = true;
    await probing;
    await Promise.all(reading);

    expect(failover.probes.filter((p) => p.res.status !== 200).map((p) => p.res.body)).to.deep.equal([]);
    const degraded = failover.probes.filter((p) => p.res.body.status === 'degraded');
    expect(degraded.length, 'probes that saw the failed master').to.be.greaterThan(0);
    for (const p of degraded) expect(p.res.body.redis.notAnswering).to.deep.equal([`127.0.0.1:${victimPort}`]);
    // Both instances saw it.
    expect(new Set(degraded.map((p) => p.instance)).size).to.equal(2);
  });

  it("keeps the workspace's requests flowing within each instance's last share: 200, then 429 with Retry-After; 503 past the bound", async () => {
    /** The limiter's verdicts on one instance: let through, refused, failed. */
    const verdicts = (instance: number) =>
      failover.reads
        .filter((r) => r.instance === instance)
        .map((r) => (r.res.status === 429 ? 'refused' : r.res.status >= 500 ? (r.limiterOnly ? 'failed' : 'read failed') : 'through'));
    if (process.env['FAILOVER_TRACE']) {
      for (const r of failover.reads.filter((r) => r.res.status >= 500)) {
        process.stdout.write(`${r.instance} ${r.limiterOnly ? 'limiter' : 'read'} +${r.at - failover.killedAt} ${JSON.stringify(r.res.body)}\n`);
      }
    }
    for (const r of failover.reads) {
      if (r.limiterOnly && r.res.status < 500) expect([400, 429]).to.include(r.res.status);
      if (!r.limiterOnly && r.res.status < 500) expect([200, 429]).to.include(r.res.status);
    }
    const a = verdicts(0);
    const b = verdicts(1);
    if (process.env['FAILOVER_TRACE']) {
      const runs = (v: string[]) => v.reduce<string[]>((out, x, i) => (i > 0 && v[i - 1] === x ? (out[out.length - 1] = `${x}x${Number(out.at(-1)!.split('x')[1]) + 1}`, out) : [...out, `${x}x1`]), []);
      process.stdout.write(`A ${runs(a).join(' ')}\nB ${runs(b).join(' ')}\n`);
      const t = (instance: number, status: number) => failover.reads.filter((r) => r.instance === instance && r.res.status === status).map((r) => r.at - failover.killedAt);
      process.stdout.write(`A 429 from +${Math.min(...t(0, 429))}; probes back at +${failover.probes.filter((p) => p.res.body.status === 'degraded').at(-1)!.at - failover.killedAt}\n`);
    }
    // The instance with the 30 s bound: never failed, and neither a stop nor unlimited.
    // (Seen once in a full run, never alone: 19 of them. The message says what they answered, and when.)
    const aFailed = failover.reads.filter((r) => r.instance === 0 && r.limiterOnly && r.res.status >= 500);
    expect(
      a.filter((v) => v === 'failed'),
      JSON.stringify(aFailed.slice(0, 5).map((r) => ({ afterKillMs: r.at - failover.killedAt, status: r.res.status, body: r.res.body }))),
    ).to.deep.equal([]);
    const aThrough = a.filter((v) => v === 'through').length;
    // Its share: 21 of the window's count of 40 at its last lease, so 53 of 100, 21 used: 32 left.
    // Until the probes see every master again, and until a request is let through after a 429
    // (the fallback refuses to the end of its window, 60 s here, so that one came from a lease
    // Redis answered: the probes can go on listing the failed node for a moment after its
    // replica serves the window, and a run saw 27 requests leased so counted as the fallback's),
    // the verdicts are the fallback's alone.
    const backAt = failover.probes.filter((p) => p.res.body.status === 'degraded').at(-1)!.at;
    const aReads = failover.reads.filter((r) => r.instance === 0);
    const letThrough = (r: (typeof aReads)[number]) => r.res.status === 200 || r.res.status === 400;
    const firstRefused = aReads.findIndex((r) => r.res.status === 429);
    const leasedAgain = aReads.findIndex((r, i) => firstRefused >= 0 && i > firstRefused && letThrough(r));
    const early = aReads.filter((r, i) => r.at < backAt && (leasedAgain < 0 || i < leasedAgain));
    const earlyThrough = early.filter(letThrough).length;
    expect(earlyThrough, 'let through by the 30 s instance during the failover').to.be.within(1, 53 - 21);
    expect(early.filter((r) => r.res.status === 429).length, '429s of the 30 s instance during the failover').to.be.greaterThan(0);
    for (const r of failover.reads.filter((r) => r.res.status === 429)) {
      expect(r.res.body.code).to.equal('RATE_LIMITED');
      expect(Number(r.res.headers.get('retry-after'))).to.be.within(1, 60);
    }
    // B's share: 20 of 41, so 49 of 100, 20 used: 29 left before its bound.
    const firstFailed = b.indexOf('failed');
    expect(b.slice(0, firstFailed).filter((v) => v === 'through').length, 'let through by the 1 s instance').to.be.within(1, 49 - 20);
    // Both together, in the window: never more than the limit and what the fallbacks let through
    // (each charged once Redis answers, but one instance may take what is left of the window
    // before the other's charge arrives).
    const through = aThrough + b.filter((v) => v === 'through').length;
    expect(41 + through).to.be.at.most(100 + (53 - 21) + (49 - 20));
    const counted = Number(await admin.get(keys.rateLimit(failover.ws!)));
    // What the fallbacks let through was charged: the window in Redis holds at least as much, up
    // to its limit (past it, a charge that met a spent window is not sent again).
    expect(counted, 'the window in Redis').to.be.at.least(Math.min(100, 41 + through));
    // The instance with the 1 s bound: let through and refused first, then 503 STORAGE_UNAVAILABLE.
    expect(firstFailed, 'a 503 of the 1 s instance').to.be.greaterThan(0);
    expect(b.slice(0, firstFailed)).to.include('through');
    const first503 = failover.reads.find((r) => r.instance === 1 && r.limiterOnly && r.res.status === 503)!;
    expect(first503.res.body.code).to.equal('STORAGE_UNAVAILABLE');
    expect(first503.at - failover.killedAt).to.be.at.least(1000);
  });

  it('logs the failover at warn, at most one line per kind a second on each instance, none at error', () => {
    const kinds = new Set<string>();
    for (const [instance, capture] of logs.entries()) {
      const logged = capture.lines.map((l) => JSON.parse(l) as { level: number; time: string; kind?: string; msg: string; suppressed?: number });
      const after = logged.filter((l) => Date.parse(l.time) >= failover.killedAt);
      if (process.env['FAILOVER_TRACE']) process.stdout.write(after.map((l) => JSON.stringify(l)).join('\n') + '\n');
      expect(after.filter((l) => l.level >= 50).map((l) => l.msg), `error lines of instance ${instance}`).to.deep.equal([]);
      const events = after.filter((l) => l.kind !== undefined);
      const last = new Map<string, number>();
      for (const l of events) {
        expect(l.level).to.equal(40);
        const at = Date.parse(l.time);
        const before = last.get(l.kind!);
        if (before !== undefined) expect(at - before, `two ${l.kind} lines within a second`).to.be.at.least(999);
        last.set(l.kind!, at);
        kinds.add(l.kind!);
      }
    }
    if (process.env['FAILOVER_TRACE']) process.stdout.write(`kinds ${[...kinds].join(', ')}\n`);
    // The instance whose limiter gave up after 1 s answered 503s: they are there, at warn.
    expect(kinds.size, 'kinds of failover lines').to.be.greaterThan(0);
  });

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
