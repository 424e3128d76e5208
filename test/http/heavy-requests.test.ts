// A workspace's requests with a large body (over LARGE_BYTES as it decodes: plain, chunked or
// compressed) do their work one at a time on an instance (http/middleware/json-body.ts, the slot
// kept by http/byte-budget.ts): a second one waits until the first has answered, so a neighbour
// waits behind one heavy write of that workspace, never several back to back. Real Redis behind
// a proxy that holds the first write's reply (and every later one): what the service sent
// meanwhile shows which writes had started.
import { request } from 'node:http';
import { expect } from 'chai';
import { Redis } from 'ioredis';
import type { CreatedWorkspace } from '../../src/admin/operations.js';
import type { RunningService } from '../../src/server.js';
import { SCRIPTS } from '../../src/store/redis/scripts.js';
import { testRedisUrl } from '../support/hooks.js';
import { startRedisProxy, type RedisProxy } from '../support/redis-proxy.js';
import { call, client, newWorkspace, startTestService } from '../support/service.js';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
/** A set of about 100 KB whose value names itself, so that what the service sent can be searched for it. */
const bigSet = (userId: string, name: string) => JSON.stringify({ userId, key: 'blob', value: `${name}:${'x'.repeat(100_000)}` });

/** POSTs `body` in 16 KiB chunks without a Content-Length (Transfer-Encoding: chunked); answers the status. */
function postChunked(baseUrl: string, path: string, apiKey: string, body: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const url = new URL(baseUrl + path);
    const req = request({ host: url.hostname, port: url.port, path: url.pathname, method: 'POST', headers: { 'content-type': 'application/json', 'x-api-key': apiKey } }, (res) => {
      res.resume();
      res.on('end', () => resolve(res.statusCode!));
    });
    req.on('error', reject);
    for (let at = 0; at < body.length; at += 16_384) req.write(body.slice(at, at + 16_384));
    req.end();
  });
}

describe('requests with a large body run one at a time per workspace', () => {
  let direct: Redis;
  let proxy: RedisProxy;
  let service: RunningService;
  let a: CreatedWorkspace;

  before(async () => {
    direct = new Redis(testRedisUrl());
    // Made before the service subscribes (test/saves/idempotency.test.ts says why).
    a = await newWorkspace(direct, 'pro');
    proxy = await startRedisProxy(Number(new URL(testRedisUrl()).port));
    service = await startTestService({ REDIS_URL: proxy.url, REDIS_COMMAND_TIMEOUT_MS: '5000', WORKSPACE_BYTES_PER_SECOND: String(64 * 1024 * 1024) });
    // The key cached and a lease taken: the writes below need Redis for their scripts only.
    for (let i = 0; i < 3; i++) expect((await client(service, a.apiKey).get('/data?userId=warm&key=k')).status).to.equal(404);
  });
  after(async () => {
    proxy.release();
    await service?.close();
    await proxy?.close();
    direct.disconnect();
  });

  // A gzip body is read by the same reader as a chunked one (readJson) and waits in the same
  // place; it is not its own case here because with the gate open its second write still waited
  // (on a reply the proxy holds, before the gate), so it could not fail.
  const senders: Record<string, (body: string) => Promise<number>> = {
    plain: async (body) => (await call(service, 'POST', '/data/set', { key: a.apiKey, rawBody: body, headers: { 'content-type': 'application/json' } })).status,
    chunked: (body) => postChunked(service.baseUrl, '/data/set', a.apiKey, body),
  };

  for (const [how, send] of Object.entries(senders)) {
    it(`a second large set of the workspace (${how}) starts once the first has answered`, async () => {
      const write = SCRIPTS.find((s) => s.name === 'writePlayer')!;
      proxy.reset();
      proxy.holdFrom(new RegExp(`${write.sha1}|Apply a player.s write`));
      const first = send(bigSet('p1', `first-${how}`));
      await sleep(200);
      const second = send(bigSet('p2', `second-${how}`));
      await sleep(500);
      const sent = proxy.sent();
      expect(sent, 'the first write reached Redis').to.include(`first-${how}:x`);
      expect(sent, "the workspace's second large write waits for the first").not.to.include(`second-${how}:x`);
      proxy.release();
      expect(await Promise.all([first, second])).to.deep.equal([200, 200]);
      expect(proxy.sent()).to.include(`second-${how}:x`);
    });
  }
});
