// A key's cache entry past its time stands in for the refresh Redis cannot answer (its master
// failing over), for at most KEY_CACHE_TTL_MS more; never once an invalidation dropped it. Runs
// against a redis-server of its own, since it pauses it (SIGSTOP: the connection stays up, so
// the subscription stays live, as on a cluster whose failing master holds the key's record but
// not the subscription).
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect } from 'chai';
import { Redis } from 'ioredis';
import { AdminOperations, type CreatedWorkspace } from '../../src/admin/operations.js';
import { STALE_RETRY_MS, type Principal } from '../../src/auth/authenticator.js';
import { loadConfig } from '../../src/config.js';
import { hashApiKey } from '../../src/domain/api-key.js';
import { keys } from '../../src/store/keys.js';
import { startLocalRedis, type LocalRedis } from '../../src/dev/local-redis.js';
import { createLogger } from '../../src/logger.js';
import { startService, type RunningService } from '../../src/server.js';
import { call } from '../support/service.js';

const TTL_MS = 2000;
const COMMAND_TIMEOUT_MS = 100;

describe('key cache: an entry past its time stands in while Redis cannot answer', function () {
  this.timeout(30_000);
  let dataDir: string;
  let redis: LocalRedis;
  let service: RunningService;
  let ops: AdminOperations;
  let admin: Redis;

  before(async () => {
    dataDir = mkdtempSync(join(tmpdir(), 'pds-stand-in-'));
    redis = await startLocalRedis({ dataDir });
    const config = loadConfig({
      REDIS_URL: redis.url,
      PORT: '0',
      HOST: '127.0.0.1',
      ADMIN_PORT: '0',
      LOG_LEVEL: 'silent',
      KEY_CACHE_TTL_MS: String(TTL_MS),
      REDIS_COMMAND_TIMEOUT_MS: String(COMMAND_TIMEOUT_MS),
    });
    service = await startService(config, createLogger(config));
    admin = new Redis(redis.url);
    ops = new AdminOperations(admin);
  });
  after(async () => {
    if (redis) process.kill(redis.process.pid!, 'SIGCONT');
    admin?.disconnect();
    await service?.close();
    await redis?.stop();
    if (dataDir) rmSync(dataDir, { recursive: true, force: true });
  });

  /** A workspace whose key and workspace entries were cached, then let pass their time. */
  async function cachedThenExpired(): Promise<CreatedWorkspace> {
    const ws = await ops.createWorkspace({ name: 'stand-in', plan: 'pro' });
    expect((await call(service, 'GET', '/ping', { key: ws.apiKey })).status).to.equal(200);
    await new Promise((r) => setTimeout(r, TTL_MS + 20));
    return ws;
  }

  /** Runs `fn` with Redis paused. */
  async function paused<T>(fn: () => Promise<T>): Promise<T> {
    process.kill(redis.process.pid!, 'SIGSTOP');
    try {
      return await fn();
    } finally {
      process.kill(redis.process.pid!, 'SIGCONT');
    }
  }

  const settle = (answer: Principal | Promise<Principal>) =>
    Promise.resolve(answer).then(
      (principal) => ({ principal, err: undefined }),
      (err: unknown) => ({ principal: undefined, err }),
    );

  it('answers with the expired entry when the refresh fails, then answers at once for a second', async () => {
    const ws = await cachedThenExpired();
    const auth = service.authenticator;
    const stale = auth.stats.stale;
    await paused(async () => {
      const first = auth.authenticate(ws.apiKey, Date.now());
      expect(first, 'past its time, the entry is refreshed from Redis').to.be.instanceOf(Promise);
      const { principal, err } = await settle(first);
      expect(err).to.equal(undefined);
      expect(principal!.workspace.id).to.equal(ws.workspaceId);
      // The key's refresh failed, then its workspace's (both past their time).
      expect(auth.stats.stale - stale).to.equal(2);
      // Kept for STALE_RETRY_MS: the next request does not wait on Redis.
      const next = auth.authenticate(ws.apiKey, Date.now());
      expect(next).to.not.be.instanceOf(Promise);
      // Past it, still standing in: answered at once, the refresh tried again behind it.
      await new Promise((r) => setTimeout(r, STALE_RETRY_MS + 100));
      const misses = auth.stats.misses;
      expect(auth.authenticate(ws.apiKey, Date.now())).to.not.be.instanceOf(Promise);
      expect(auth.stats.misses, 'a refresh in the background').to.equal(misses + 1);
    });
    // Redis back: the refresh behind it (answered once Redis was) made the entry fresh again,
    // standing in no more: past another STALE_RETRY_MS it is answered with no refresh at all.
    await new Promise((r) => setTimeout(r, STALE_RETRY_MS + 50));
    const misses = auth.stats.misses;
    const answer = auth.authenticate(ws.apiKey, Date.now());
    expect(answer).to.not.be.instanceOf(Promise);
    expect((answer as Principal).keyId).to.equal(ws.keyId);
    expect(auth.stats.misses).to.equal(misses);
  });

  it('reads every entry again once the subscription drops and comes back, the entries standing in meanwhile', async () => {
    const ws = await ops.createWorkspace({ name: 'resubscribed', plan: 'pro' });
    expect((await call(service, 'GET', '/ping', { key: ws.apiKey })).status).to.equal(200);
    const auth = service.authenticator;
    expect(auth.authenticate(ws.apiKey, Date.now()), 'cached').to.not.be.instanceOf(Promise);
    // The subscription's connection closed (its node failed, say): ioredis connects again and the
    // subscriber subscribes again; invalidations sent in between were missed.
    await admin.call('CLIENT', 'KILL', 'TYPE', 'pubsub');
    for (let i = 0; (await admin.pubsub('NUMSUB', keys.eventsChannel()))[1] !== 1; i++) {
      expect(i, 'subscribed again').to.be.below(100);
      await new Promise((r) => setTimeout(r, 20));
    }
    await new Promise((r) => setTimeout(r, 50));
    const stale = auth.stats.stale;
    await paused(async () => {
      const answer = auth.authenticate(ws.apiKey, Date.now());
      expect(answer, 'not trusted before it is read again').to.be.instanceOf(Promise);
      const { principal, err } = await settle(answer);
      expect(err).to.equal(undefined);
      expect(principal!.workspace.id).to.equal(ws.workspaceId);
      expect(auth.stats.stale - stale).to.equal(2);
    });
  });

  it('drops an entry standing in once a refresh finds its key gone (its invalidation lost)', async () => {
    const ws = await cachedThenExpired();
    const auth = service.authenticator;
    await paused(async () => {
      expect((await settle(auth.authenticate(ws.apiKey, Date.now()))).principal, 'stood in').to.not.equal(undefined);
    });
    // Deleted behind the service's back: no event.
    await admin.del(keys.apiKey(hashApiKey(ws.apiKey)));
    await new Promise((r) => setTimeout(r, STALE_RETRY_MS + 50));
    // Still standing in: answered at once, its refresh behind it finds no key.
    expect(auth.authenticate(ws.apiKey, Date.now())).to.not.be.instanceOf(Promise);
    await new Promise((r) => setTimeout(r, 100));
    // Gone from the cache, and remembered as no key: refused at once.
    expect(() => auth.authenticate(ws.apiKey, Date.now())).to.throw().with.property('status', 401);
  });

  it('never stands in for an entry an invalidation dropped (a revocation applies at once)', async () => {
    const ws = await cachedThenExpired();
    const auth = service.authenticator;
    // As the revocation's event would, while Redis cannot be asked whether the key is revoked.
    auth.invalidate({ type: 'key', keyHash: hashApiKey(ws.apiKey) });
    const { principal, err } = await paused(() => settle(auth.authenticate(ws.apiKey, Date.now())));
    expect(principal).to.equal(undefined);
    expect(err).to.be.instanceOf(Error);
  });

  it('never stands in past twice KEY_CACHE_TTL_MS after the entry was read', async () => {
    const ws = await cachedThenExpired();
    await new Promise((r) => setTimeout(r, TTL_MS));
    const stale = service.authenticator.stats.stale;
    const { principal, err } = await paused(() => settle(service.authenticator.authenticate(ws.apiKey, Date.now())));
    expect(principal).to.equal(undefined);
    expect(err).to.be.instanceOf(Error);
    expect(service.authenticator.stats.stale).to.equal(stale);
  });
});
