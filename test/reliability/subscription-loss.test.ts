// The key cache is trusted only while the invalidation subscription is up. When the
// subscriber's connection is cut, the cache is dropped, so a change whose invalidation was
// missed (here: a key revoked in Redis with no PUBLISH at all) is still seen at once.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect } from 'chai';
import { Redis } from 'ioredis';
import { AdminOperations } from '../../src/admin/operations.js';
import { hashApiKey } from '../../src/domain/api-key.js';
import { loadConfig } from '../../src/config.js';
import { startLocalRedis, type LocalRedis } from '../../src/dev/local-redis.js';
import { createLogger } from '../../src/logger.js';
import { startService, type RunningService } from '../../src/server.js';
import { keys } from '../../src/store/keys.js';
import { call } from '../support/service.js';

/** Lets the invalidations that creating a workspace published arrive before the cache is warmed. */
const settle = () => new Promise((r) => setTimeout(r, 150));

describe('losing the cache-invalidation subscription', function () {
  this.timeout(30_000);
  let dataDir: string;
  let redis: LocalRedis;
  let service: RunningService;
  let admin: Redis;

  before(async () => {
    dataDir = mkdtempSync(join(tmpdir(), 'pds-sub-'));
    redis = await startLocalRedis({ dataDir });
    const config = loadConfig({ REDIS_URL: redis.url, PORT: '0', HOST: '127.0.0.1', ADMIN_PORT: '0', LOG_LEVEL: 'silent' });
    service = await startService(config, createLogger(config));
    admin = new Redis(redis.url);
  });
  after(async () => {
    admin?.disconnect();
    await service?.close();
    await redis?.stop();
    rmSync(dataDir, { recursive: true, force: true });
  });

  /** A new workspace whose key the service has cached (its second ping is a cache hit). */
  async function cachedKey(name: string) {
    const ws = await new AdminOperations(admin).createWorkspace({ name, plan: 'pro' });
    await settle();
    const ping = async () => (await call(service, 'GET', '/ping', { key: ws.apiKey })).status;
    expect(await ping()).to.equal(200);
    const hitsBefore = service.authenticator.stats.hits;
    expect(await ping()).to.equal(200);
    expect(service.authenticator.stats.hits, 'the key is served from the cache').to.equal(hitsBefore + 1);
    return { ws, ping };
  }

  it('drops the cache when the subscriber connection is cut, so a missed revocation still applies', async () => {
    const { ws, ping } = await cachedKey('sub');

    expect(Number(await admin.call('CLIENT', 'KILL', 'TYPE', 'pubsub'))).to.be.at.least(1);
    await new Promise((r) => setTimeout(r, 300));
    // Revoked behind the service's back: no invalidation is ever published.
    await admin.hset(keys.apiKey(hashApiKey(ws.apiKey)), 'status', 'revoked');
    expect(await ping()).to.equal(401);
  });

  it('without a cut, the same silent revocation is only seen after the cache entry expires (the control)', async () => {
    const { ws, ping } = await cachedKey('control');
    await admin.hset(keys.apiKey(hashApiKey(ws.apiKey)), 'status', 'revoked');
    expect(await ping()).to.equal(200);
  });
});
