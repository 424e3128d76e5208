// A whole installation exported and imported elsewhere, end to end: a source Redis populated
// through the real HTTP APIs (several workspaces and plans, read/write/revoked keys, bans and
// the allow-list, players written over several versions, increments stored as Lua prints them,
// deleted keys and a player whose data was all deleted), `export --all`, then `import --all`
// into an empty Redis and into an empty three-master Redis Cluster, a service started on each,
// and every public API answer (ping, GET all, GET one key, 404s with their versions, a revoked
// key's 401) compared with the source's byte for byte. Also: a backup whose file was changed
// is refused before anything is written.
import { mkdtempSync, rmSync, appendFileSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect } from 'chai';
import { AdminOperations } from '../../src/admin/operations.js';
import { startLocalRedis, type LocalRedis } from '../../src/dev/local-redis.js';
import type { RunningService } from '../../src/server.js';
import { restoreApiKeyRaw, type ApiKeyRecordRaw } from '../../src/store/installation/installation-records.js';
import { connectRedis, createRedis, type RedisClient } from '../../src/store/redis/redis.js';
import { ADMIN_TOKEN, adminCall } from '../support/admin.js';
import { startCluster, type TestCluster } from '../support/cluster.js';
import { call, startTestService } from '../support/service.js';

const PLAYERS = ['1', '2', '3', '10', 'p.x'];
const KEYS = ['coins', 'profile', 'tiny', '10', 'gone', 'missing'];

interface Source {
  readonly keys: string[];
}

async function populate(service: RunningService): Promise<Source> {
  const apiKeys: string[] = [];
  for (const [name, plan] of [['alpha', 'pro'], ['beta', 'free'], ['gamma', 'pro']] as const) {
    const created = await adminCall(service, 'POST', '/workspaces', { body: { name, plan } });
    expect(created.status, created.text).to.equal(201);
    const { workspaceId, apiKey } = created.body.data;
    const reader = await adminCall(service, 'POST', `/workspaces/${workspaceId}/keys`, { body: { scope: 'read', label: 'reader' } });
    const revoked = await adminCall(service, 'POST', `/workspaces/${workspaceId}/keys`, { body: { label: 'old' } });
    expect((await adminCall(service, 'POST', `/keys/${revoked.body.data.keyId}/revoke`)).status).to.equal(200);
    apiKeys.push(apiKey, reader.body.data.apiKey, revoked.body.data.apiKey);
    const post = async (path: string, body: unknown) => {
      const res = await call(service, 'POST', path, { key: apiKey, body });
      expect(res.status, res.text).to.equal(200);
    };
    for (const userId of PLAYERS) {
      await post('/data/set', { userId, key: 'coins', value: 5 });
      await post('/data/increment', { userId, key: 'coins', amount: 0.1 });
      await post('/data/increment', { userId, key: 'tiny', amount: 0.0000001 });
      await post('/data/set', { userId, key: 'profile', value: { name: `${name} ${userId}`, tags: ['a', 'é'], level: 3 } });
      await post('/data/batch', { userId, ops: [{ op: 'set', key: '10', value: [1, 2] }, { op: 'set', key: 'gone', value: true }, { op: 'increment', key: 'coins', amount: 2 }] });
      await post('/data/delete', { userId, key: 'gone' });
    }
    await post('/data/delete', { userId: '3' });
  }
  expect((await adminCall(service, 'POST', '/bans', { body: { address: '203.0.113.7', reason: 'test' } })).status).to.equal(200);
  expect((await adminCall(service, 'POST', '/ban-allow', { body: { entry: '198.51.100.0/24', note: 'office' } })).status).to.equal(200);
  return { keys: apiKeys };
}

/** Every public answer the test compares: status and body text, in a fixed order. */
async function answers(service: RunningService, source: Source): Promise<string[]> {
  const out: string[] = [];
  for (const key of source.keys) {
    const ping = await call(service, 'GET', '/ping', { key });
    out.push(`ping ${ping.status} ${ping.text}`);
    for (const userId of [...PLAYERS, 'nobody']) {
      const all = await call(service, 'GET', `/data?userId=${encodeURIComponent(userId)}`, { key });
      out.push(`${userId} ${all.status} ${all.text}`);
      for (const k of KEYS) {
        const one = await call(service, 'GET', `/data?userId=${encodeURIComponent(userId)}&key=${k}`, { key });
        out.push(`${userId}/${k} ${one.status} ${one.text}`);
      }
    }
  }
  return out;
}

describe('export --all and import --all', function () {
  this.timeout(180_000);
  let dir: string;
  let backup: string;
  let sourceRedis: LocalRedis;
  let expected: string[];
  let source: Source;
  let bansBefore: unknown;

  const opsOn = (redis: RedisClient) => new AdminOperations(redis, { actor: 'test' });
  const serviceOn = (env: Record<string, string>) => startTestService({ ADMIN_TOKEN, RATE_LIMIT_FREE: '100000', RATE_LIMIT_PRO: '100000', ...env });

  async function check(service: RunningService): Promise<void> {
    const after = await answers(service, source);
    expect(after).to.have.length(expected.length);
    for (const [i, line] of after.entries()) expect(line).to.equal(expected[i]);
    const bans = await adminCall(service, 'GET', '/bans');
    expect(bans.body).to.deep.equal(bansBefore);
  }

  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'pds-backup-test-'));
    sourceRedis = await startLocalRedis({ dataDir: join(dir, 'source') });
    const service = await serviceOn({ REDIS_URL: sourceRedis.url });
    try {
      source = await populate(service);
      expected = await answers(service, source);
      bansBefore = (await adminCall(service, 'GET', '/bans')).body;
    } finally {
      await service.close();
    }
    // The answers compared hold data, 404s with versions and a revoked key's 401, not just errors.
    expect(expected.filter((l) => / 200 \{"success":true,"data":\{/.test(l)).length).to.be.greaterThan(100);
    expect(expected.some((l) => l.includes('KEY_REVOKED'))).to.equal(true);
    expect(expected.some((l) => l.includes('1e-07'))).to.equal(true);
    expect(expected.some((l) => l.startsWith('3 404') && l.includes('"version":'))).to.equal(true);
    const redis = createRedis({ url: sourceRedis.url, commandTimeoutMs: 5000, connectTimeoutMs: 5000 });
    await connectRedis(redis, 5000);
    try {
      backup = join(dir, 'backup');
      const manifest = await opsOn(redis).exportInstallation(backup);
      expect(manifest.counts).to.deep.include({ workspaces: 3, apiKeys: 9, bans: 1, allowEntries: 1, players: 15 });
    } finally {
      redis.disconnect();
    }
    const keysFile = readFileSync(join(backup, 'api-keys.ndjson'), 'utf8');
    for (const raw of source.keys) expect(keysFile).not.to.include(raw);
  });

  after(async () => {
    await sourceRedis?.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  it('into an empty Redis: every public answer is the same, byte for byte; a second import changes nothing', async () => {
    const target = await startLocalRedis({ dataDir: join(dir, 'target') });
    const redis = createRedis({ url: target.url, commandTimeoutMs: 5000, connectTimeoutMs: 5000 });
    try {
      await connectRedis(redis, 5000);
      const result = await opsOn(redis).importInstallation(backup);
      expect(result).to.deep.include({ workspaces: { created: 3, existing: 0 }, apiKeys: { created: 9, existing: 0 }, bans: { created: 1, existing: 0 } });
      expect(result.players.map((p) => p.imported)).to.deep.equal([5, 5, 5]);
      const again = await opsOn(redis).importInstallation(backup);
      expect(again.workspaces).to.deep.equal({ created: 0, existing: 3 });
      expect(again.players.every((p) => p.imported === 0 && p.failed === 0)).to.equal(true);
      const service = await serviceOn({ REDIS_URL: target.url });
      try {
        await check(service);
      } finally {
        await service.close();
      }
    } finally {
      redis.disconnect();
      await target.stop();
    }
  });

  it('into an empty Redis Cluster: every public answer is the same, byte for byte', async () => {
    let cluster: TestCluster | undefined;
    let redis: RedisClient | undefined;
    try {
      cluster = await startCluster();
      redis = createRedis({ clusterNodes: cluster.nodes.map((n) => ({ host: '127.0.0.1', port: n.port })), commandTimeoutMs: 5000, connectTimeoutMs: 5000 });
      await connectRedis(redis, 10_000);
      const result = await opsOn(redis).importInstallation(backup);
      expect(result.players.map((p) => p.imported)).to.deep.equal([5, 5, 5]);
      const service = await serviceOn({ REDIS_CLUSTER_NODES: cluster.seeds });
      try {
        await check(service);
      } finally {
        await service.close();
      }
    } finally {
      redis?.disconnect();
      await cluster?.stop();
    }
  });

  describe('into an installation where a workspace id of the backup belongs to another workspace', () => {
    let target: LocalRedis;
    let redis: RedisClient;
    let alphaId: string;
    let other: { workspaceId: string; apiKey: string };
    const alphaKeys = () => source.keys.slice(0, 3);
    /** The target's own studio, whose id the backup's "alpha" also has: its data must stay its own. */
    async function otherStudioIntact(service: RunningService): Promise<void> {
      const mine = await call(service, 'GET', '/data?userId=1', { key: other.apiKey });
      expect(mine.body).to.deep.include({ success: true, data: { secret: 'target studio' } });
      for (const key of alphaKeys()) {
        const res = await call(service, 'GET', '/data?userId=1', { key });
        expect(res.text, 'a backup key must not open the target studio').to.not.include('target studio');
      }
    }

    beforeEach(async () => {
      target = await startLocalRedis({ dataDir: join(dir, `collide-${Math.random().toString(36).slice(2)}`) });
      redis = createRedis({ url: target.url, commandTimeoutMs: 5000, connectTimeoutMs: 5000 });
      await connectRedis(redis, 5000);
      const ids = readFileSync(join(backup, 'workspaces.ndjson'), 'utf8').trimEnd().split('\n').map((l) => JSON.parse(l) as { id: string; fields: { name: string } });
      alphaId = ids.find((w) => w.fields.name === 'alpha')!.id;
      const made = await opsOn(redis).createWorkspace({ id: alphaId, name: 'another studio' });
      other = { workspaceId: made.workspaceId, apiKey: made.apiKey };
      await opsOn(redis).setPlayerValue(alphaId, '1', 'secret', 'target studio');
    });
    afterEach(async () => {
      redis.disconnect();
      await target.stop();
    });

    it('refuses by default, naming each colliding id, and writes nothing', async () => {
      const before = await redis.dbsize();
      let refused: unknown;
      await opsOn(redis).importInstallation(backup).catch((err: unknown) => (refused = err));
      expect(refused).to.have.property('code', 'CONFLICT');
      expect(refused).to.have.property('status', 409);
      expect((refused as Error).message).to.include(alphaId).and.match(/nothing written/).and.match(/--on-collision rename/);
      expect((refused as { extras: { data: unknown } }).extras.data).to.deep.equal({
        collisions: [{ workspaceId: alphaId, name: 'alpha', existingName: 'another studio' }],
      });
      expect(await redis.dbsize()).to.equal(before);
    });

    it('with rename, restores the colliding workspace under a new id with its keys, and leaves the other studio alone', async () => {
      const result = await opsOn(redis).importInstallation(backup, { onCollision: 'rename' });
      expect(result.workspaces).to.deep.equal({ created: 3, existing: 0 });
      expect(result.renamed).to.have.length(1);
      const [renamed] = result.renamed;
      expect(renamed!.from).to.equal(alphaId);
      expect(renamed!.to).to.match(/^[A-Za-z0-9_-]{1,64}$/);
      expect(renamed!.to).to.not.equal(alphaId);
      expect(result.players.map((p) => [p.workspaceId, p.imported])).to.deep.include([renamed!.to, 5]);
      const again = await opsOn(redis).importInstallation(backup, { onCollision: 'rename' });
      expect(again.workspaces).to.deep.equal({ created: 0, existing: 3 });
      expect(again.renamed).to.deep.equal(result.renamed);
      const service = await serviceOn({ REDIS_URL: target.url });
      try {
        await otherStudioIntact(service);
        // The backup's alpha keys answer what they answered at the source, from the renamed workspace.
        const after = await answers(service, source);
        for (const [i, line] of after.entries()) {
          expect(line).to.equal(line.startsWith('ping 200') ? expected[i]!.replace(alphaId, renamed!.to) : expected[i]);
        }
      } finally {
        await service.close();
      }
    });

    it('refuses, whatever the option, a backup key that already opens another workspace here', async () => {
      const [beta] = readFileSync(join(backup, 'api-keys.ndjson'), 'utf8')
        .trimEnd()
        .split('\n')
        .map((l) => JSON.parse(l) as ApiKeyRecordRaw)
        .filter((k) => k.fields['workspaceId'] !== alphaId);
      await restoreApiKeyRaw(redis, { keyHash: beta!.keyHash, fields: { ...beta!.fields, workspaceId: other.workspaceId } });
      const before = await redis.dbsize();
      for (const onCollision of ['refuse', 'rename', 'skip']) {
        let refused: unknown;
        await opsOn(redis).importInstallation(backup, { onCollision }).catch((err: unknown) => (refused = err));
        expect(refused, onCollision).to.have.property('code', 'CONFLICT');
        if (onCollision !== 'refuse') expect((refused as Error).message).to.include(beta!.fields['keyId']!);
      }
      expect(await redis.dbsize()).to.equal(before);
    });

    it('with skip, restores every other workspace and neither the colliding one nor its keys', async () => {
      const result = await opsOn(redis).importInstallation(backup, { onCollision: 'skip' });
      expect(result.workspaces).to.deep.equal({ created: 2, existing: 0 });
      expect(result.apiKeys).to.deep.equal({ created: 6, existing: 0 });
      expect(result.skipped).to.deep.equal([alphaId]);
      expect(result.players.map((p) => p.workspaceId)).to.not.include(alphaId);
      const service = await serviceOn({ REDIS_URL: target.url });
      try {
        await otherStudioIntact(service);
        for (const key of alphaKeys()) expect((await call(service, 'GET', '/ping', { key })).status).to.equal(401);
        expect((await call(service, 'GET', '/ping', { key: source.keys[3] })).status).to.equal(200);
      } finally {
        await service.close();
      }
    });
  });

  it('refuses a backup whose file does not match its manifest, before writing anything', async () => {
    const target = await startLocalRedis({ dataDir: join(dir, 'tampered') });
    const redis = createRedis({ url: target.url, commandTimeoutMs: 5000, connectTimeoutMs: 5000 });
    const copy = join(dir, 'copy');
    try {
      await connectRedis(redis, 5000);
      const { cpSync } = await import('node:fs');
      cpSync(backup, copy, { recursive: true });
      appendFileSync(join(copy, 'bans.ndjson'), '{"subject":"192.0.2.1","record":"{}"}\n');
      let refused: unknown;
      await opsOn(redis).importInstallation(copy).catch((err: unknown) => (refused = err));
      expect(refused).to.have.property('message').that.matches(/nothing written: bans\.ndjson does not match manifest\.json/);
      expect(await redis.dbsize()).to.equal(0);
    } finally {
      redis.disconnect();
      await target.stop();
    }
  });

  it('refuses a backup with a bad record even when its manifest matches, before writing anything', async () => {
    const target = await startLocalRedis({ dataDir: join(dir, 'bad-record') });
    const redis = createRedis({ url: target.url, commandTimeoutMs: 5000, connectTimeoutMs: 5000 });
    const copy = join(dir, 'copy-bad-record');
    try {
      await connectRedis(redis, 5000);
      const { cpSync, writeFileSync } = await import('node:fs');
      const { createHash } = await import('node:crypto');
      cpSync(backup, copy, { recursive: true });
      const bad = `${JSON.stringify({ keyHash: 'a'.repeat(64), fields: { keyId: 'key_x', workspaceId: 'ws}{bad' } })}\n`;
      writeFileSync(join(copy, 'api-keys.ndjson'), bad);
      const manifest = JSON.parse(readFileSync(join(copy, 'manifest.json'), 'utf8'));
      const file = manifest.files.find((f: { name: string }) => f.name === 'api-keys.ndjson');
      Object.assign(file, { bytes: Buffer.byteLength(bad), lines: 1, sha256: createHash('sha256').update(bad).digest('hex') });
      writeFileSync(join(copy, 'manifest.json'), JSON.stringify(manifest));
      let refused: unknown;
      await opsOn(redis).importInstallation(copy).catch((err: unknown) => (refused = err));
      expect(refused).to.have.property('message').that.matches(/nothing written: api-keys\.ndjson holds a key without a valid keyId and workspaceId/);
      expect(await redis.dbsize()).to.equal(0);
    } finally {
      redis.disconnect();
      await target.stop();
    }
  });
});
