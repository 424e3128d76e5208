// Redis failures of a failover or a restart: sorted into kinds from real Redis errors, counted,
// logged at warn a line per kind a second at most (saying how many it stands for), and at error
// only once they last longer than a failover; through the service, a stopped Redis gives no
// error line at all.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect } from 'chai';
import { Redis } from 'ioredis';
import { startLocalRedis, freePort, type LocalRedis } from '../../../src/dev/local-redis.js';
import { createLogger } from '../../../src/logger.js';
import { metrics } from '../../../src/metrics.js';
import { startService } from '../../../src/server.js';
import { FailoverLog, redisFailureKind, type FailoverKind } from '../../../src/store/redis/failover-log.js';
import { LogCapture } from '../../support/log-capture.js';
import { call, newWorkspace, testConfig, testRedis } from '../../support/service.js';

/** The counter's value for one kind, all instances of this process together. */
async function counted(kind: FailoverKind): Promise<number> {
  const values = (await metrics.redisFailoverEvents.get()).values;
  return values.find((v) => v.labels['kind'] === kind)?.value ?? 0;
}

const lines = (capture: LogCapture) => capture.lines.map((l) => JSON.parse(l) as Record<string, unknown>);

/** The error `promise` rejects with. */
async function failure(promise: Promise<unknown>): Promise<unknown> {
  try {
    await promise;
  } catch (err) {
    return err;
  }
  throw new Error('expected a failure');
}

describe('Redis failures of a failover or a restart', () => {
  let redis: Redis;
  before(() => {
    redis = testRedis();
  });
  after(() => redis.disconnect());

  it('sorts real Redis errors into kinds, and leaves other errors alone', async () => {
    // Redis itself answers each of these replies (as a cluster node would).
    const reply = (text: string) => failure(redis.eval(`return redis.error_reply('${text}')`, 0));
    expect(redisFailureKind(await reply('MOVED 3999 127.0.0.1:7001'))).to.equal('moved');
    expect(redisFailureKind(await reply('ASK 3999 127.0.0.1:7001'))).to.equal('ask');
    expect(redisFailureKind(await reply('CLUSTERDOWN The cluster is down'))).to.equal('clusterdown');
    expect(redisFailureKind(await reply('TRYAGAIN Multiple keys request during rehashing of slot'))).to.equal('tryagain');
    expect(redisFailureKind(await reply('LOADING Redis is loading the dataset in memory'))).to.equal('unavailable');
    expect(redisFailureKind(await reply('ERR wrong number of arguments'))).to.equal(undefined);
    expect(redisFailureKind(new Error('Too many Cluster redirections. Last error: Error: Connection is closed.'))).to.equal('redirections');
    expect(redisFailureKind(new TypeError('x is undefined'))).to.equal(undefined);

    // A port nothing listens on.
    const closed = new Redis({ port: await freePort(), host: '127.0.0.1', lazyConnect: true, enableOfflineQueue: false, retryStrategy: () => null });
    closed.on('error', () => {});
    expect(redisFailureKind(await failure(closed.connect()))).to.equal('connection');
    expect(redisFailureKind(await failure(closed.get('k')))).to.equal('connection');
    closed.disconnect();
  });

  it('logs at warn at most one line per kind a second, saying how many it stands for, and counts every one', async function () {
    this.timeout(10_000);
    const capture = new LogCapture();
    let now = 1_000_000;
    const log = new FailoverLog(createLogger({ logLevel: 'debug', nodeEnv: 'test' }, capture), () => now);
    const timeouts = await counted('timeout');
    const timeout = new Error('Command timed out');
    for (let i = 0; i < 40; i++) expect(log.note(timeout, { requestId: `r${i}` }, 'a request answered 503')).to.equal(true);
    expect(log.note(new Error('connect ECONNREFUSED 127.0.0.1:6390'), { connection: 'main' }, 'connection error')).to.equal(true);
    expect(log.note(new Error('a bug'), {}, 'x')).to.equal(false);
    expect(lines(capture).map((l) => [l['level'], l['kind'], l['suppressed']])).to.deep.equal([
      [40, 'timeout', 0],
      [40, 'connection', 0],
    ]);
    expect((await counted('timeout')) - timeouts).to.equal(40);
    // When the second is over, the 39 held back are told in one line.
    now += 1000;
    await new Promise((r) => setTimeout(r, 1100));
    expect(lines(capture).slice(2).map((l) => [l['level'], l['kind'], l['suppressed'], l['err']])).to.deep.equal([[40, 'timeout', 39, 'Command timed out']]);
    // Nothing at error: a failover needs no one.
    expect(lines(capture).filter((l) => (l['level'] as number) >= 50)).to.deep.equal([]);
  });

  it('logs at error, once a minute, failures that last longer than a failover', () => {
    const capture = new LogCapture();
    let now = 5_000_000;
    const log = new FailoverLog(createLogger({ logLevel: 'debug', nodeEnv: 'test' }, capture), () => now);
    const refused = new Error('connect ECONNREFUSED 127.0.0.1:6390');
    // A failure a second for 29 s: a failover, however long.
    for (let s = 0; s < 30; s++, now += 1000) log.note(refused, {}, 'connection error');
    expect(lines(capture).filter((l) => l['level'] === 50)).to.have.length(0);
    // On past 30 s: one error line, and the next a minute later.
    for (let s = 0; s < 90; s++, now += 1000) log.note(refused, {}, 'connection error');
    const errors = lines(capture).filter((l) => l['level'] === 50);
    expect(errors).to.have.length(2);
    expect(errors[0]!['failingForMs']).to.equal(30_000);
    // A quiet spell ends the streak: the next failure is a new one.
    now += 10_000;
    log.note(refused, {}, 'connection error');
    expect(lines(capture).filter((l) => l['level'] === 50)).to.have.length(2);
    expect(lines(capture).filter((l) => l['level'] === 40).length).to.equal(121);
  });

  describe('through the service, Redis stopped', () => {
    let dataDir: string;
    let local: LocalRedis;

    before(async function () {
      this.timeout(20_000);
      dataDir = mkdtempSync(join(tmpdir(), 'pds-failover-log-'));
      local = await startLocalRedis({ dataDir });
    });
    after(async () => {
      await local?.stop();
      rmSync(dataDir, { recursive: true, force: true });
    });

    it('answers 503 and logs the failures at warn, a line per kind a second, none at error', async function () {
      this.timeout(20_000);
      const capture = new LogCapture();
      const config = testConfig({ REDIS_URL: local.url, LOG_LEVEL: 'info' });
      const service = await startService(config, createLogger(config, capture));
      try {
        const admin = testRedis(local.url);
        const ws = await newWorkspace(admin);
        admin.disconnect();
        expect((await call(service, 'GET', '/ping', { key: ws.apiKey })).status).to.equal(200);
        const before = capture.lines.length;
        const connections = await counted('connection');
        await local.stop();
        const started = Date.now();
        const answers = await Promise.all(Array.from({ length: 30 }, () => call(service, 'GET', '/ping', { key: ws.apiKey })));
        expect(answers.map((a) => a.status)).to.deep.equal(Array.from({ length: 30 }, () => 503));
        const elapsedSeconds = Math.ceil((Date.now() - started) / 1000) + 1;
        const logged = capture.lines.slice(before).map((l) => JSON.parse(l) as Record<string, unknown>);
        // The failures of the requests and the connections' own, each a failover event.
        expect(logged.filter((l) => (l['level'] as number) >= 50).map((l) => l['msg'])).to.deep.equal([]);
        const events = logged.filter((l) => l['kind'] !== undefined);
        expect(events.length).to.be.greaterThan(0);
        for (const l of events) expect(l['level']).to.equal(40);
        const perKind = new Map<unknown, number>();
        for (const l of events) perKind.set(l['kind'], (perKind.get(l['kind']) ?? 0) + 1);
        for (const [kind, n] of perKind) expect(n, `lines of ${String(kind)}`).to.be.at.most(elapsedSeconds);
        expect((await counted('connection')) - connections).to.be.at.least(30);
      } finally {
        await service.close();
        local = await startLocalRedis({ dataDir, port: local.port });
      }
    });
  });
});
