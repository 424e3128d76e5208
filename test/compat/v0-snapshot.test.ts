// Data written by the release before versions (test/fixtures/v0-snapshot/) stays readable and
// writable: its players read as version 1, count on from there, and can be locked and batched.
import { expect } from 'chai';
import { copyFileSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Redis } from 'ioredis';
import { startLocalRedis, type LocalRedis } from '../../src/dev/local-redis.js';
import type { RunningService } from '../../src/server.js';
import { testOps } from '../support/admin.js';
import { client, startTestService } from '../support/service.js';

const FIXTURE = new URL('../fixtures/v0-snapshot/dump.rdb', import.meta.url);

describe('data written before versions (v0 snapshot)', () => {
  let dataDir: string;
  let redis: LocalRedis;
  let direct: Redis;
  let service: RunningService;
  let api: ReturnType<typeof client>;

  before(async () => {
    dataDir = mkdtempSync(join(tmpdir(), 'pds-v0-'));
    copyFileSync(FIXTURE, join(dataDir, 'dump.rdb'));
    redis = await startLocalRedis({ dataDir, appendonly: false });
    direct = new Redis(redis.url);
    const { apiKey } = await testOps(direct).createKey('ws_legacy');
    service = await startTestService({ REDIS_URL: redis.url });
    api = client(service, apiKey);
  });

  after(async () => {
    await service?.close();
    direct?.disconnect();
    await redis?.stop();
    rmSync(dataDir, { recursive: true, force: true });
  });

  it('reads every player as it was written, at version 1', async () => {
    expect((await api.get('/ping')).body).to.include({ workspaceId: 'ws_legacy', workspaceName: 'Legacy game', plan: 'pro' });
    expect((await api.get('/data?userId=1')).body).to.deep.equal({
      success: true,
      data: { inventory: { sword: 1, potions: ['red', 'blue'] }, name: 'Ada', coins: 105 },
      version: 1,
    });
    const one = await api.get('/data?userId=2&key=settings');
    expect(one.body.data.value).to.deep.equal({ music: false, volume: 0.5 });
    expect(one.body.version).to.equal(1);
    expect((await api.get('/data?userId=player_three&key=nope')).body).to.include({ code: 'KEY_NOT_FOUND', version: 1 });
    expect((await api.get('/data?userId=4')).body).to.include({ code: 'PLAYER_NOT_FOUND', version: 0 });
  });

  it('writes on from version 1, with ifVersion, increments and batches', async () => {
    const inc = await api.post('/data/increment', { userId: 2, key: 'coins', amount: 1, ifVersion: 1 });
    expect(inc.body).to.deep.equal({ success: true, value: 2.5, version: 2 });
    const batch = await api.post('/data/batch', {
      userId: 1,
      ifVersion: 1,
      ops: [
        { op: 'increment', key: 'coins', amount: -5 },
        { op: 'set', key: 'name', value: 'Ada L.' },
      ],
    });
    expect(batch.body.version).to.equal(2);
    expect((await api.get('/data?userId=1')).body.data).to.deep.equal({
      inventory: { sword: 1, potions: ['red', 'blue'] },
      name: 'Ada L.',
      coins: 100,
    });
  });

  it('locks a player written before sessions existed, and fences writes without the session', async () => {
    const held = await api.post('/sessions/acquire', { userId: 'player_three', owner: 'job-1', load: true });
    expect(held.body.version).to.equal(1);
    expect(held.body.data.values).to.deep.equal({ level: 7, tutorialDone: true });
    expect((await api.post('/data/set', { userId: 'player_three', key: 'level', value: 8 })).body.code).to.equal('SESSION_LOCKED');
    const saved = await api.post('/data/batch', {
      userId: 'player_three',
      sessionId: held.body.data.sessionId,
      release: true,
      ops: [{ op: 'set', key: 'level', value: 8 }],
    });
    expect(saved.body.version).to.equal(2);
    expect((await api.get('/data?userId=player_three')).body).to.deep.equal({
      success: true,
      data: { level: 8, tutorialDone: true },
      version: 2,
    });
  });
});
