import { expect } from 'chai';
import type { Principal } from '../../src/auth/authenticator.js';
import { hashApiKey } from '../../src/domain/api-key.js';
import { AppError } from '../../src/errors.js';
import { createLogger } from '../../src/logger.js';
import { EventSubscriber } from '../../src/store/redis/events.js';
import { createRedis } from '../../src/store/redis/redis.js';
import { testOps } from '../support/admin.js';
import { testRedisUrl } from '../support/hooks.js';
import { call, newWorkspace, useService } from '../support/service.js';

/** Calls authenticate and tells whether it answered at once, and with what. */
function authenticateNow(t: ReturnType<typeof useService>, key: string) {
  try {
    const answer = t.service.authenticator.authenticate(key, Date.now());
    return { synchronous: !(answer instanceof Promise), answer };
  } catch (err) {
    return { synchronous: true, thrown: err };
  }
}

/** A revocation's event drops the key from the cache when it arrives: let it arrive first. */
function revocationPassed(): Promise<void> {
  return new Promise((r) => setTimeout(r, 200));
}

describe('Authenticator', () => {
  const t = useService();

  it('answers a cached key synchronously, and a key it must read from Redis with a promise', async () => {
    const ws = await newWorkspace(t.redis);
    const first = authenticateNow(t, ws.apiKey);
    expect(first.synchronous).to.equal(false);
    expect((await first.answer!).workspace.id).to.equal(ws.workspaceId);

    const second = authenticateNow(t, ws.apiKey);
    expect(second.synchronous).to.equal(true);
    const principal = second.answer as Principal;
    expect(principal).to.include({ keyId: ws.keyId, scope: 'write', dev: false });
    expect(principal.workspace).to.include({ id: ws.workspaceId, plan: 'pro' });
  });

  it('refuses a revoked key at once, and then synchronously from the cache, with the same 401', async () => {
    const ws = await newWorkspace(t.redis);
    expect((await call(t.service, 'GET', '/ping', { key: ws.apiKey })).status).to.equal(200);
    await testOps(t.redis).revokeKey(ws.keyId);
    await new Promise((r) => setTimeout(r, 50));

    // The invalidation dropped the cached record: Redis is read again, and says revoked.
    const reread = authenticateNow(t, ws.apiKey);
    expect(reread.synchronous).to.equal(false);
    const err = await (reread.answer as Promise<Principal>).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(err).to.be.instanceOf(AppError).and.to.include({ status: 401, message: 'API key has been revoked' });

    // The revoked record is cached now, and refused without a Redis read.
    const cached = authenticateNow(t, ws.apiKey);
    expect(cached.synchronous).to.equal(true);
    expect(cached.thrown).to.be.instanceOf(AppError).and.to.include({ status: 401, message: 'API key has been revoked' });
    expect((await call(t.service, 'GET', '/ping', { key: ws.apiKey })).status).to.equal(401);
  });

  it('reads a workspace dropped from the cache again, keeping the cached key', async () => {
    const ws = await newWorkspace(t.redis);
    expect((await call(t.service, 'GET', '/ping', { key: ws.apiKey })).status).to.equal(200);
    const misses = t.service.authenticator.stats.misses;
    t.service.authenticator.invalidate({ type: 'workspace', workspaceId: ws.workspaceId });

    const answer = authenticateNow(t, ws.apiKey);
    expect(answer.synchronous).to.equal(false);
    expect((await answer.answer!).workspace.id).to.equal(ws.workspaceId);
    // The key itself came from the cache: only the workspace was read.
    expect(t.service.authenticator.stats.misses).to.equal(misses);
    expect(authenticateNow(t, ws.apiKey).synchronous).to.equal(true);
  });

  it('keeps a new key and workspace cached when their creation events come after the first lookup', async () => {
    const ws = await newWorkspace(t.redis);
    const auth = t.service.authenticator;
    expect((await call(t.service, 'GET', '/ping', { key: ws.apiKey })).status).to.equal(200);
    // Pub/sub across a cluster's nodes may deliver them after the first request's reads.
    auth.invalidate({ type: 'workspace', workspaceId: ws.workspaceId, created: true });
    auth.invalidate({ type: 'key', keyHash: hashApiKey(ws.apiKey), created: true });
    const misses = auth.stats.misses;
    expect(authenticateNow(t, ws.apiKey).synchronous).to.equal(true);
    expect(auth.stats.misses).to.equal(misses);
  });

  it('drops a cached "no such key" on the creation event of that key', async () => {
    const made = 'pds_' + 'Q'.repeat(40);
    const auth = t.service.authenticator;
    const first = authenticateNow(t, made);
    await (first.answer as Promise<Principal>).catch(() => undefined);
    // Cached: refused at once.
    const cached = authenticateNow(t, made);
    expect(cached.synchronous).to.equal(true);
    expect(cached.thrown).to.be.instanceOf(AppError).and.to.include({ status: 401 });
    auth.invalidate({ type: 'key', keyHash: hashApiKey(made), created: true });
    const misses = auth.stats.misses;
    const again = authenticateNow(t, made);
    expect(again.synchronous, 'looked up again').to.equal(false);
    expect(await (again.answer as Promise<Principal>).then(() => 0, (e: AppError) => e.status)).to.equal(401);
    expect(auth.stats.misses).to.equal(misses + 1);
  });
});

describe('Authenticator: the budget of failed lookups per address', () => {
  const t = useService();
  const caller = () => '203.0.113.9';

  it('never holds back an address with no failures, however many real keys it looks up at once; after one, lookups in flight count', async () => {
    const { Authenticator } = await import('../../src/auth/authenticator.js');
    const { ApiKeyStore } = await import('../../src/store/workspaces/api-keys.js');
    const { WorkspaceStore } = await import('../../src/store/workspaces/workspaces.js');
    const auth = new Authenticator(new ApiKeyStore(t.redis), new WorkspaceStore(t.redis), undefined, {
      ttlMs: 60_000,
      maxEntries: 100,
      failuresPerMinute: 5,
    });
    const ws = await newWorkspace(t.redis);
    // A cold cache and 40 requests with a real key from one address (a proxy): all admitted.
    const now = Date.now();
    const answers = await Promise.allSettled(Array.from({ length: 40 }, () => auth.authenticate(ws.apiKey, now, caller)));
    expect(answers.filter((a) => a.status === 'fulfilled')).to.have.length(40);
    // One failure; then of 10 guesses at once, only budget - 1 reach Redis, the rest are 429 at once.
    const guess = () => `pds_${'Z'.repeat(24)}${Math.random().toString(36).slice(2, 10).padEnd(8, '0')}`;
    await Promise.resolve().then(() => auth.authenticate(guess(), now, caller)).then(
      () => expect.fail('a made-up key was admitted'),
      (err: AppError) => expect(err.status).to.equal(401),
    );
    const statuses = await Promise.all(
      Array.from({ length: 10 }, async () => {
        try {
          await auth.authenticate(guess(), now, caller);
          return 200;
        } catch (err) {
          return (err as AppError).status;
        }
      }),
    );
    expect(statuses.filter((s) => s === 401)).to.have.length(4);
    expect(statuses.filter((s) => s === 429)).to.have.length(6);
  });

  /** An authenticator with the given budget, caching while its own subscription is live. */
  async function budgeted(failuresPerMinute: number, ttlMs: number) {
    const { Authenticator } = await import('../../src/auth/authenticator.js');
    const { ApiKeyStore } = await import('../../src/store/workspaces/api-keys.js');
    const { WorkspaceStore } = await import('../../src/store/workspaces/workspaces.js');
    const subscriber = createRedis({ url: testRedisUrl(), commandTimeoutMs: 1000, connectTimeoutMs: 1000, autoPipelining: false });
    const events = new EventSubscriber(subscriber, createLogger({ logLevel: 'silent', nodeEnv: 'test' }));
    await events.start();
    const auth = new Authenticator(new ApiKeyStore(t.redis), new WorkspaceStore(t.redis), events, { ttlMs, maxEntries: 100, failuresPerMinute });
    return { auth, stop: () => events.stop() };
  }

  const madeUp = () => `pds_${'Y'.repeat(24)}${Math.random().toString(36).slice(2, 10).padEnd(8, '0')}`;
  const statusOf = async (answer: () => Principal | Promise<Principal>) => {
    try {
      await answer();
      return 200;
    } catch (err) {
      return (err as AppError).status;
    }
  };

  it('after a failure, real keys beyond the places left wait for a lookup in flight to end instead of being refused', async () => {
    const { auth, stop } = await budgeted(5, 60_000);
    try {
      const real = await Promise.all(Array.from({ length: 6 }, () => newWorkspace(t.redis)));
      expect(await statusOf(() => auth.authenticate(madeUp(), Date.now(), caller))).to.equal(401);
      // One failure leaves 4 places: 30 lookups of real keys at once (a proxy's cold start).
      const now = Date.now();
      const statuses = await Promise.all(Array.from({ length: 30 }, (_, i) => statusOf(() => auth.authenticate(real[i % 6]!.apiKey, now, caller))));
      expect(statuses).to.deep.equal(Array.from({ length: 30 }, () => 200));
      expect(auth.stats.failureLimited).to.equal(0);
    } finally {
      await stop();
    }
  });

  it('looks a key it has seen valid up again past a spent budget; a missing or malformed key is 401 and not counted', async () => {
    const { auth, stop } = await budgeted(3, 100);
    try {
      const ws = await newWorkspace(t.redis);
      expect(await statusOf(() => auth.authenticate(ws.apiKey, Date.now(), caller))).to.equal(200);
      for (let i = 0; i < 3; i++) expect(await statusOf(() => auth.authenticate(madeUp(), Date.now(), caller))).to.equal(401);
      expect(await statusOf(() => auth.authenticate(madeUp(), Date.now(), caller)), 'the budget is spent').to.equal(429);
      // Its cache entry has expired (TTL 100 ms): looked up again, not refused.
      await new Promise((r) => setTimeout(r, 150));
      const misses = auth.stats.misses;
      expect(await statusOf(() => auth.authenticate(ws.apiKey, Date.now(), caller))).to.equal(200);
      expect(auth.stats.misses, 'a lookup').to.equal(misses + 1);
      // A key seen revoked is held to the budget when its entry expires: 429, no lookup.
      const revoked = await newWorkspace(t.redis);
      await testOps(t.redis).revokeKey(revoked.keyId);
      await revocationPassed();
      const third = () => '192.0.2.44';
      expect(await statusOf(() => auth.authenticate(revoked.apiKey, Date.now(), third))).to.equal(401);
      for (let i = 0; i < 2; i++) expect(await statusOf(() => auth.authenticate(madeUp(), Date.now(), third))).to.equal(401);
      await new Promise((r) => setTimeout(r, 150));
      const before = auth.stats.misses;
      expect(await statusOf(() => auth.authenticate(revoked.apiKey, Date.now(), third))).to.equal(429);
      expect(auth.stats.misses, 'no lookup').to.equal(before);
      // No key, or one that cannot be a key: 401 even past the budget.
      expect(await statusOf(() => auth.authenticate(undefined, Date.now(), caller))).to.equal(401);
      expect(await statusOf(() => auth.authenticate('not-a-key', Date.now(), caller))).to.equal(401);
      // ... and not counted: 10 of them leave another address's budget whole.
      const other = () => '198.51.100.7';
      for (let i = 0; i < 10; i++) expect(await statusOf(() => auth.authenticate(i % 2 ? undefined : 'pds_short', Date.now(), other))).to.equal(401);
      for (let i = 0; i < 3; i++) expect(await statusOf(() => auth.authenticate(madeUp(), Date.now(), other))).to.equal(401);
      expect(await statusOf(() => auth.authenticate(madeUp(), Date.now(), other))).to.equal(429);
    } finally {
      await stop();
    }
  });
});
