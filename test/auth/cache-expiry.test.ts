import { expect } from 'chai';
import { hashApiKey } from '../../src/domain/api-key.js';
import { keys } from '../../src/store/keys.js';
import { call, newWorkspace, useService } from '../support/service.js';

describe('key cache expiry (the bound on staleness when an invalidation is lost)', () => {
  const t = useService({ KEY_CACHE_TTL_MS: '1000' });

  it('serves from the cache, and refetches every key within KEY_CACHE_TTL_MS despite the jitter', async () => {
    const workspaces = await Promise.all(Array.from({ length: 10 }, () => newWorkspace(t.redis)));
    for (const ws of workspaces) expect((await call(t.service, 'GET', '/ping', { key: ws.apiKey })).status).to.equal(200);
    // Revoked behind the service's back: no invalidation is published.
    await Promise.all(workspaces.map((ws) => t.redis.hset(keys.apiKey(hashApiKey(ws.apiKey)), 'status', 'revoked')));
    const misses = t.service.authenticator.stats.misses;
    expect((await call(t.service, 'GET', '/ping', { key: workspaces[0]!.apiKey })).status).to.equal(200);
    expect(t.service.authenticator.stats.misses).to.equal(misses);
    await new Promise((r) => setTimeout(r, 1050));
    for (const ws of workspaces) expect((await call(t.service, 'GET', '/ping', { key: ws.apiKey })).status).to.equal(401);
  });
});
