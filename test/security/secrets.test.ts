// Raw API keys and the admin token never appear in the service's logs (at LOG_LEVEL=debug),
// in Redis, or in any answer other than the one that creates a key.
import { expect } from 'chai';
import type { Redis } from 'ioredis';
import { createLogger } from '../../src/logger.js';
import { startService, type RunningService } from '../../src/server.js';
import { scanMatching } from '../../src/store/redis/scan.js';
import { call, newWorkspace, testConfig, testRedis } from '../support/service.js';
import { LogCapture } from '../support/log-capture.js';

const ADMIN_TOKEN = 'secrets-test-admin-token-5b9f2c71d0';

async function allRedisText(redis: Redis): Promise<string> {
  const parts: string[] = [];
  let cursor = '0';
  do {
    const [next, batch] = await redis.scan(cursor, 'MATCH', 'pds:*', 'COUNT', 1000);
    cursor = next;
    for (const key of batch) {
      parts.push(key);
      const type = await redis.type(key);
      if (type === 'hash') parts.push(JSON.stringify(await redis.hgetall(key)));
      else if (type === 'set') parts.push(JSON.stringify(await redis.smembers(key)));
      else if (type === 'string') parts.push((await redis.get(key)) ?? '');
    }
  } while (cursor !== '0');
  return parts.join('\n');
}

describe('secrets', function () {
  this.timeout(60_000);
  let service: RunningService;
  let redis: Redis;
  const logs = new LogCapture();
  const rawKeys: string[] = [];
  const answers: string[] = [];

  before(async () => {
    const config = testConfig({ LOG_LEVEL: 'debug', ADMIN_TOKEN });
    service = await startService(config, createLogger(config, logs));
    redis = testRedis();
  });
  after(async () => {
    await service?.close();
    redis?.disconnect();
  });

  it('never log, store or echo a raw API key or the admin token', async () => {
    const admin = (method: string, path: string, body?: unknown, token = ADMIN_TOKEN) =>
      call({ baseUrl: `${service.opsUrl}/admin/v1` }, method, path, { body, headers: { authorization: `Bearer ${token}` } });
    const created = await admin('POST', '/workspaces', { name: 'secrets', plan: 'pro' });
    const ws = created.body.data as { workspaceId: string; apiKey: string; keyId: string };
    rawKeys.push(ws.apiKey);
    const second = await admin('POST', `/workspaces/${ws.workspaceId}/keys`);
    rawKeys.push(second.body.data.apiKey);
    rawKeys.push((await newWorkspace(redis)).apiKey);
    const track = async (p: Promise<{ text: string }>) => answers.push((await p).text);

    await track(admin('GET', `/workspaces/${ws.workspaceId}/keys`));
    await track(admin('GET', `/workspaces/${ws.workspaceId}`, undefined, ADMIN_TOKEN + 'x'));
    await track(admin('GET', `/workspaces/${ws.workspaceId}`, undefined, ws.apiKey));
    for (const key of rawKeys) {
      await track(call(service, 'GET', '/ping', { key }));
      // The caller's own data, echoed by design: not tracked.
      await call(service, 'POST', '/data/set', { key, body: { userId: 1, key: 'k', value: key } });
      await track(call(service, 'GET', '/data?userId=1&key=k', { key: key + 'x' }));
      await track(call(service, 'GET', '/ping', { key: key.slice(0, -1) }));
      await track(call(service, 'GET', '/ping', { headers: { authorization: `Bearer ${key}` } }));
      await track(call(service, 'GET', `/data?userId=1&apiKey=${key}&key=${key}`, { key }));
      await track(call(service, 'GET', `/${key}`, { key }));
      await track(call(service, 'POST', '/data/set', { key, rawBody: `{"userId":1,"key":"${key}",`, headers: { 'content-type': 'application/json' } }));
      await track(call(service, 'POST', '/data/set', { key, body: { userId: key, key: 'k', value: 1 } }));
      await track(call({ baseUrl: service.opsUrl }, 'GET', `/admin/v1/workspaces/${key}`, { headers: { authorization: `Bearer ${key}` } }));
    }
    // What a caller chose to store (a key used as a value or a user id above) is its data, not a
    // leak: it is erased before Redis is searched, with the history that keeps what the
    // deletes replaced and the version that survives them.
    for (const key of rawKeys) {
      await call(service, 'POST', '/data/delete', { key, body: { userId: 1 } });
      await call(service, 'POST', '/data/delete', { key, body: { userId: key } });
    }
    await scanMatching(redis, 'pds:p:*', async (node, found) => {
      const callers = found.filter((k) => k.includes(ws.workspaceId) || rawKeys.some((raw) => k.includes(raw)) || k.endsWith(':h'));
      if (callers.length > 0) await node.del(...callers);
    });
    await track(admin('POST', `/keys/${second.body.data.keyId}/revoke`));
    await track(call(service, 'GET', '/ping', { key: second.body.data.apiKey }));

    const stored = await allRedisText(redis);
    expect(logs.lines.length).to.be.greaterThan(35);
    for (const secret of [...rawKeys, ADMIN_TOKEN]) {
      expect(logs.lines.filter((l) => l.includes(secret)), 'logs').to.deep.equal([]);
      expect(stored.split('\n').filter((l) => l.includes(secret)), 'Redis').to.deep.equal([]);
      // The one answer allowed to hold a raw key is the one that created it.
      const holding = answers.filter((a) => a.includes(secret));
      expect(holding, `answers holding ${secret.slice(0, 8)}...`).to.deep.equal([]);
    }
  });
});
