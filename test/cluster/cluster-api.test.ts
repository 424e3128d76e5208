// The same service on a Redis Cluster (3 masters, 1 replica each): every public endpoint,
// every admin operation (HTTP and CLI) and the cross-instance cache invalidation work, and no
// operation ever makes any node answer CROSSSLOT.
import { expect } from 'chai';
import fc from 'fast-check';
import { Cluster, Redis } from 'ioredis';
import { loadConfig } from '../../src/config.js';
import { hashApiKey } from '../../src/domain/api-key.js';
import { createLogger } from '../../src/logger.js';
import { startService, type RunningService } from '../../src/server.js';
import { keys } from '../../src/store/keys.js';
import { scanMatching } from '../../src/store/redis/scan.js';
import { usageDay } from '../../src/store/workspaces/rate-limiter.js';
import { freePort } from '../../src/dev/local-redis.js';
import { cli, oneJsonLine } from '../support/cli.js';
import { crossSlotErrors, startCluster, type TestCluster } from '../support/cluster.js';
import { call, client } from '../support/service.js';

const ADMIN_TOKEN = 'cluster-admin-token-0123456789';

function admin(service: RunningService, method: string, path: string, body?: unknown) {
  return call({ baseUrl: `${service.opsUrl}/admin/v1` }, method, path, {
    body,
    headers: { authorization: `Bearer ${ADMIN_TOKEN}` },
  });
}

describe('on a Redis Cluster (3 masters + 3 replicas)', function () {
  this.timeout(60_000);
  let cluster: TestCluster;
  let services: RunningService[];
  let redis: Cluster;

  before(async () => {
    cluster = await startCluster();
    const env = {
      REDIS_CLUSTER_NODES: cluster.seeds,
      PORT: '0',
      HOST: '127.0.0.1',
      ADMIN_PORT: '0',
      ADMIN_TOKEN,
      LOG_LEVEL: 'silent',
      RATE_LIMIT_FREE: '20',
    };
    // Two instances, to see invalidations travel between them over the cluster's pub/sub.
    services = [];
    for (let i = 0; i < 2; i++) {
      const config = loadConfig(env);
      services.push(await startService(config, createLogger(config)));
    }
    redis = new Cluster([{ host: '127.0.0.1', port: cluster.nodes[0]!.port }]);
    redis.on('error', () => {});
  });
  after(async () => {
    await Promise.all((services ?? []).map((s) => s.close()));
    redis?.disconnect();
    await cluster?.stop();
  });

  it('serves every public endpoint and admin operation, and no node ever answers CROSSSLOT', async () => {
    const [a, b] = services as [RunningService, RunningService];
    const created = await admin(a, 'POST', '/workspaces', { name: 'Cluster Studio', plan: 'pro' });
    expect(created.status, created.text).to.equal(201);
    const ws = created.body.data as { workspaceId: string; apiKey: string; keyId: string };
    expect((await admin(b, 'GET', `/workspaces/${ws.workspaceId}`)).body.data.name).to.equal('Cluster Studio');

    const api = client(a, ws.apiKey);
    expect((await api.get('/ping')).body).to.deep.include({ success: true, workspaceId: ws.workspaceId });
    // Players spread over every master: 30 players, each with a few entries.
    for (let user = 0; user < 30; user++) {
      const set = await api.post('/data/set', { userId: user, key: 'profile', value: { name: `p${user}`, tags: ['a'] } });
      expect(set.status, set.text).to.equal(200);
      expect((await api.post('/data/increment', { userId: user, key: 'coins', amount: 5 })).body.value).to.equal(5);
    }
    const one = await api.get('/data?userId=7&key=profile');
    expect(one.body.data.value).to.deep.equal({ name: 'p7', tags: ['a'] });
    expect((await api.get('/data?userId=7')).body.data).to.deep.equal({ profile: { name: 'p7', tags: ['a'] }, coins: 5 });
    expect((await api.get('/data?userId=7&key=missing')).status).to.equal(404);
    expect((await api.get('/data?userId=nobody')).status).to.equal(404);

    const increments = await Promise.all(
      Array.from({ length: 100 }, () => client(b, ws.apiKey).post('/data/increment', { userId: 'hot', key: 'n' })),
    );
    expect(increments.every((r) => r.status === 200)).to.equal(true);
    expect((await api.get('/data?userId=hot&key=n')).body.data.value).to.equal(100);

    expect((await api.post('/data/delete', { userId: 7, key: 'coins' })).body.data.deleted).to.equal(1);
    expect((await api.post('/data/delete', { userId: 8 })).body.data.deleted).to.equal(2);
    expect((await api.get('/data?userId=8')).status).to.equal(404);
    // GET /players checks each listed player on its own master: every holder of coins but 7 and 8.
    await Promise.all(services.map((s) => s.playerIndex.flush()));
    const holders: string[] = [];
    for (let cursor: string | null = null, pages = 0; pages === 0 || cursor !== null; pages++) {
      const page = await api.get(`/players?hasKey=coins&limit=5${cursor === null ? '' : `&cursor=${cursor}`}`);
      expect(page.status, page.text).to.equal(200);
      holders.push(...page.body.data.players.map((p: { userId: string }) => p.userId));
      cursor = page.body.data.next;
    }
    expect(holders.sort()).to.deep.equal(Array.from({ length: 30 }, (_, i) => String(i)).filter((id) => id !== '7' && id !== '8').sort());

    const second = await admin(a, 'POST', `/workspaces/${ws.workspaceId}/keys`);
    expect(second.status, second.text).to.equal(201);
    const listed = await admin(b, 'GET', `/workspaces/${ws.workspaceId}/keys`);
    expect(listed.body.data.map((k: { keyId: string }) => k.keyId)).to.have.members([ws.keyId, second.body.data.keyId]);
    // Warm instance b's cache with the second key, revoke it through instance a: b must refuse it at once.
    expect((await call(b, 'GET', '/ping', { key: second.body.data.apiKey })).status).to.equal(200);
    expect((await admin(a, 'POST', `/keys/${second.body.data.keyId}/revoke`)).status).to.equal(200);
    // On a cluster the invalidation crosses the cluster bus after PUBLISH returns: allow it a moment.
    const revokedAt = Date.now();
    while ((await call(b, 'GET', '/ping', { key: second.body.data.apiKey })).status !== 401) {
      expect(Date.now() - revokedAt, 'the revocation did not reach the other instance').to.be.below(1000);
      await new Promise((r) => setTimeout(r, 5));
    }

    expect(await crossSlotErrors(cluster)).to.equal(0);
  });

  it('runs the admin CLI against the cluster with REDIS_CLUSTER_NODES', async () => {
    // Run as the other CLI tests run it (node with tsx's loader): through npx, each took twice as long.
    const env = { REDIS_CLUSTER_NODES: cluster.seeds, REDIS_URL: '' };
    const ws = oneJsonLine(await cli(['workspace', 'create', '--name', 'CLI on cluster', '--json'], env)) as { workspaceId: string; apiKey: string };
    expect(oneJsonLine(await cli(['key', 'list', '--workspace', ws.workspaceId, '--json'], env))).to.have.length(1);
    expect((await call(services[0]!, 'GET', '/ping', { key: ws.apiKey })).body.workspaceName).to.equal('CLI on cluster');
    expect(await crossSlotErrors(cluster)).to.equal(0);
  });

  it('enforces the plan limit on the cluster', async () => {
    const created = await admin(services[0]!, 'POST', '/workspaces', { name: 'limited', plan: 'free' });
    const key = created.body.data.apiKey as string;
    // Each instance gets more requests than the whole budget, so neither holds leased requests
    // it did not use: exactly the budget passes.
    const answers = await Promise.all(
      Array.from({ length: 50 }, (_, i) => call(services[i % 2]!, 'GET', '/ping', { key })),
    );
    expect(answers.filter((r) => r.status === 200)).to.have.length(20);
    expect(answers.filter((r) => r.status === 429)).to.have.length(30);
  });

  it('drops the key caches when a subscriber connection is cut, so a missed revocation still applies', async () => {
    const created = await admin(services[0]!, 'POST', '/workspaces', { name: 'sub', plan: 'pro' });
    const key = created.body.data.apiKey as string;
    await new Promise((r) => setTimeout(r, 150)); // the invalidations of the creation arrive first
    for (const service of services) {
      expect((await call(service, 'GET', '/ping', { key })).status).to.equal(200);
      const hits = service.authenticator.stats.hits;
      expect((await call(service, 'GET', '/ping', { key })).status).to.equal(200);
      expect(service.authenticator.stats.hits, 'served from the cache').to.equal(hits + 1);
    }
    let killed = 0;
    for (const node of cluster.nodes) {
      const direct = new Redis({ port: node.port, host: '127.0.0.1' });
      killed += Number(await direct.call('CLIENT', 'KILL', 'TYPE', 'pubsub'));
      direct.disconnect();
    }
    expect(killed).to.be.at.least(services.length);
    await new Promise((r) => setTimeout(r, 300));
    // Revoked behind the services' backs: no invalidation is published.
    await redis.hset(keys.apiKey(hashApiKey(key)), 'status', 'revoked');
    for (const service of services) expect((await call(service, 'GET', '/ping', { key })).status).to.equal(401);
  });

  it('starts when the first seed is down, and its caches follow invalidations', async () => {
    const config = loadConfig({
      REDIS_CLUSTER_NODES: `127.0.0.1:${await freePort()},${cluster.seeds}`,
      PORT: '0',
      HOST: '127.0.0.1',
      ADMIN_PORT: '0',
      LOG_LEVEL: 'silent',
    });
    const third = await startService(config, createLogger(config));
    try {
      const created = await admin(services[0]!, 'POST', '/workspaces', { name: 'seeds', plan: 'pro' });
      const { apiKey, keyId } = created.body.data as { apiKey: string; keyId: string };
      expect((await call(third, 'GET', '/ping', { key: apiKey })).status).to.equal(200);
      await admin(services[0]!, 'POST', `/keys/${keyId}/revoke`);
      const revokedAt = Date.now();
      while ((await call(third, 'GET', '/ping', { key: apiKey })).status !== 401) {
        expect(Date.now() - revokedAt).to.be.below(1000);
        await new Promise((r) => setTimeout(r, 5));
      }
    } finally {
      await third.close();
    }
  });

  it('walks every key of a workspace across all masters', async () => {
    const created = await admin(services[0]!, 'POST', '/workspaces', { name: 'walk', plan: 'pro' });
    const ws = created.body.data as { workspaceId: string; apiKey: string };
    const users = Array.from({ length: 60 }, (_, i) => `p${i}`);
    for (const user of users) await client(services[0]!, ws.apiKey).post('/data/set', { userId: user, key: 'k', value: 1 });
    const owners = new Set(await Promise.all(users.map((u) => cluster.masterOf(keys.player(ws.workspaceId, u)))));
    expect(owners.size).to.equal(3);
    const found: string[] = [];
    await scanMatching(redis, keys.playerHashPattern(ws.workspaceId), async (_node, batch) => {
      found.push(...batch);
    });
    expect(found.map((k) => keys.playerKeyUserId(ws.workspaceId, k)).sort()).to.deep.equal([...users].sort());
  });

  it('gives every script keys of one hash slot, for any workspace and user id', async () => {
    const id = fc.stringMatching(/^[A-Za-z0-9_-]{1,64}$/);
    const userId = fc.stringMatching(/^[A-Za-z0-9_.-]{1,64}$/);
    await fc.assert(
      fc.asyncProperty(id, userId, async (ws, user) => {
        // rate-limit.lua: the window; usage-add.lua: the day's usage; write-player.lua and
        // player-session.lua: the player's hash, history and kept answer, all in one slot.
        const [window, usage] = await Promise.all([
          redis.cluster('KEYSLOT', keys.rateLimit(ws)),
          redis.cluster('KEYSLOT', keys.usage(ws, usageDay(Date.now()))),
        ]);
        expect(window).to.equal(usage);
        // Workspace keys share the tag too, and a player key's tag holds only its own ids.
        expect(await redis.cluster('KEYSLOT', keys.workspace(ws))).to.equal(window);
        expect(keys.player(ws, user).match(/\{([^}]*)\}/)![1]).to.equal(`${ws}:${user}`);
        const [player, ...same] = await Promise.all([
          redis.cluster('KEYSLOT', keys.player(ws, user)),
          redis.cluster('KEYSLOT', keys.playerHistory(ws, user)),
          redis.cluster('KEYSLOT', keys.playerHistoryCoarse(ws, user)),
          redis.cluster('KEYSLOT', keys.playerHistoryMeta(ws, user)),
          redis.cluster('KEYSLOT', keys.playerIdempotency(ws, user, 'abc')),
          redis.cluster('KEYSLOT', keys.playerInbox(ws, user)),
        ]);
        expect(same).to.deep.equal(same.map(() => player));
      }),
      { numRuns: 200 },
    );
  });

  it('keeps saves safe on the cluster: batches over every master, sessions fenced across instances, idempotent retries', async () => {
    const [a, b] = services as [RunningService, RunningService];
    const created = await admin(a, 'POST', '/workspaces', { name: 'safe saves', plan: 'pro' });
    const ws = created.body.data as { workspaceId: string; apiKey: string };
    const onA = client(a, ws.apiKey);
    const onB = client(b, ws.apiKey);
    const users = Array.from({ length: 30 }, (_, i) => `s${i}`);
    expect(new Set(await Promise.all(users.map((u) => cluster.masterOf(keys.player(ws.workspaceId, u))))).size).to.equal(3);

    // A server joins its 30 players: one session each, then saves them all in one request.
    const sessions = new Map<string, string>();
    for (const user of users) {
      const res = await onA.post('/sessions/acquire', { userId: user, owner: 'job-A', load: true });
      expect(res.status, res.text).to.equal(200);
      sessions.set(user, res.body.data.sessionId);
    }
    const save = (release: boolean) => ({
      players: users.map((user) => ({
        userId: user,
        sessionId: sessions.get(user),
        release,
        ops: [{ op: 'increment', key: 'coins', amount: 10 }, { op: 'set', key: 'seen', value: true }],
      })),
    });
    const saved = await onA.post('/data/batch', save(false), { headers: { 'Idempotency-Key': 'autosave-1' } });
    expect(saved.body.data.players.every((p: { success: boolean }) => p.success)).to.equal(true);
    // The same save retried on the other instance replays, and counts once.
    const retried = await onB.post('/data/batch', save(false), { headers: { 'Idempotency-Key': 'autosave-1' } });
    expect(retried.text).to.equal(saved.text);
    expect((await onB.get('/data?userId=s7&key=coins')).body).to.deep.include({ version: 1 });

    // Another server steals one player on instance b; instance a's next write to it is fenced.
    const stolen = await onB.post('/sessions/acquire', { userId: 's3', owner: 'job-B', steal: true });
    expect(stolen.status).to.equal(200);
    const second = await onA.post('/data/batch', save(true));
    const outcomes = second.body.data.players as Array<{ userId: string; success: boolean; code?: string }>;
    const refused = outcomes.filter((p) => !p.success);
    expect(refused.map((p) => [p.userId, p.code])).to.deep.equal([['s3', 'SESSION_LOST']]);
    expect((await onB.get('/data?userId=s3&key=coins')).body.data.value).to.equal(10);
    expect((await onB.get('/data?userId=s4&key=coins')).body.data.value).to.equal(20);
    // Released by the save: another server takes the player at once.
    expect((await onB.post('/sessions/acquire', { userId: 's4', owner: 'job-B' })).status).to.equal(200);
    expect(await crossSlotErrors(cluster)).to.equal(0);
  });

  it('hands messages to the sessions holding players on every master, one acquire for them all, acknowledged by one save', async () => {
    const [a, b] = services as [RunningService, RunningService];
    const created = await admin(a, 'POST', '/workspaces', { name: 'messages', plan: 'pro' });
    const ws = created.body.data as { workspaceId: string; apiKey: string };
    const onA = client(a, ws.apiKey);
    const onB = client(b, ws.apiKey);
    const users = Array.from({ length: 30 }, (_, i) => `m${i}`);
    expect(new Set(await Promise.all(users.map((u) => cluster.masterOf(keys.player(ws.workspaceId, u))))).size).to.equal(3);
    // Gifts from another server (instance b), before the players join.
    for (const user of users) expect((await onB.post('/messages', { userId: user, message: { gift: user } })).status).to.equal(200);
    // One acquire for the 30 players on instance a, with their data and messages.
    const joined = await onA.post('/sessions/acquire', { players: users, owner: 'job-A', load: true });
    const players = joined.body.data.players as Array<{ userId: string; success: boolean; sessionId: string; messages: Array<{ id: string; message: { gift: string } }> }>;
    expect(players.every((p, i) => p.success && p.messages.length === 1 && p.messages[0]!.message.gift === users[i])).to.equal(true);
    // A second gift arrives for one player while it is held: the next save hands it over.
    await onB.post('/messages', { userId: 'm5', message: { gift: 'late' } });
    const save = await onA.post('/data/batch', {
      players: players.map((p) => ({
        userId: p.userId,
        sessionId: p.sessionId,
        ops: [{ op: 'increment', key: 'gifts', amount: 1 }],
        ackMessages: p.messages.map((m) => m.id),
      })),
    });
    const results = save.body.data.players as Array<{ userId: string; success: boolean; messages: Array<{ message: { gift: string } }> }>;
    expect(results.every((r) => r.success)).to.equal(true);
    expect(results.filter((r) => r.messages.length > 0).map((r) => [r.userId, r.messages[0]!.message.gift])).to.deep.equal([['m5', 'late']]);
    for (const user of ['m0', 'm17', 'm29']) expect((await onB.get(`/messages?userId=${user}`)).body.data.messages).to.deep.equal([]);
    expect((await onB.get('/messages?userId=m5')).body.data.messages).to.have.length(1);
    expect(await crossSlotErrors(cluster)).to.equal(0);
  });
});
