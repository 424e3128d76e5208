// POST /api/v1/webhooks/roblox against the real service and Redis, with bodies signed here from
// the platform's documented algorithm: good, bad, stale and future signatures, malformed
// bodies, the dashboard's sample, duplicates (even after the player wrote again), games no
// workspace serves, the body limit, the budget of failed signatures, and the gate in enforce.
import { expect } from 'chai';
import type { Redis } from 'ioredis';
import type { CreatedWorkspace } from '../../src/admin/operations.js';
import { userDigest } from '../../src/domain/erasure.js';
import type { RunningService } from '../../src/server.js';
import { keys } from '../../src/store/keys.js';
import { ADMIN_TOKEN, adminCall, testOps } from '../support/admin.js';
import {
  DIGEST_SECRET,
  ERASURE_ENV,
  WEBHOOK_SECRET,
  erasureNotification,
  freshGameId,
  freshUserId,
  keysOfPlayer,
  platformSignature,
  postWebhook,
  waitForJob,
} from '../support/erasure.js';
import { CURL_UA, freshIPv4, via } from '../support/gate.js';
import { call, startTestService, testConfig, testRedis, useService } from '../support/service.js';
import { LogCapture } from '../support/log-capture.js';
import { createLogger } from '../../src/logger.js';
import { startService } from '../../src/server.js';

async function playerWith(service: RunningService, ws: CreatedWorkspace, userId: number, value: unknown = 1) {
  const res = await call(service, 'POST', '/data/set', { key: ws.apiKey, body: { userId, key: 'coins', value } });
  expect(res.status, res.text).to.equal(200);
}

/** A workspace serving a fresh game, and a player with data in it. */
async function setUp(h: { service: RunningService; redis: Redis }) {
  const ws = await testOps(h.redis).createWorkspace({ name: 'webhook', plan: 'pro' });
  const gameId = freshGameId();
  await testOps(h.redis).erasures.setGames(ws.workspaceId, [gameId]);
  const userId = freshUserId();
  await playerWith(h.service, ws, userId);
  return { ws, gameId, userId };
}

describe('the platform webhook (POST /api/v1/webhooks/roblox)', function () {
  this.timeout(30_000);
  const h = useService({ ...ERASURE_ENV, ADMIN_TOKEN, HISTORY_MAX_VERSIONS: '10', ROBLOX_WEBHOOK_MAX_AGE_SECONDS: '120' });

  it('records a signed erasure request, answers at once, and the worker erases the player', async () => {
    const { ws, gameId, userId } = await setUp(h);
    const neighbour = userId + 1;
    await playerWith(h.service, ws, neighbour);
    const res = await postWebhook(h.service.baseUrl, erasureNotification(userId, [gameId]));
    expect(res.status, res.text).to.equal(200);
    expect(res.body.data.status).to.equal('accepted');
    const job = await waitForJob(h.redis, res.body.data.jobId);
    expect(job['workspaces']).to.equal(JSON.stringify([ws.workspaceId]));
    expect(await keysOfPlayer(h.redis, ws.workspaceId, userId)).to.deep.equal([]);
    expect(await keysOfPlayer(h.redis, ws.workspaceId, neighbour)).to.have.length.greaterThan(0);
    const audit = await testOps(h.redis).readAudit({ workspaceId: ws.workspaceId, limit: 20 });
    const erase = audit.find((e) => e.action === 'player.erase');
    expect(erase?.details?.['user']).to.equal(userDigest(DIGEST_SECRET, String(userId)));
  });

  it('refuses a bad signature, a missing or malformed header, a stale or future timestamp: 401, nothing recorded', async () => {
    const { ws, gameId, userId } = await setUp(h);
    const body = erasureNotification(userId, [gameId]);
    const now = Math.floor(Date.now() / 1000);
    const tries: Array<[string, string | null]> = [
      ['wrong secret', platformSignature(body, now, 'not-the-dashboard-secret')],
      ['another body', platformSignature(body.replace(String(userId), String(userId + 1)), now)],
      ['no header', null],
      ['malformed', 'sha256=abc'],
      ['stale', platformSignature(body, now - 121)],
      ['future', platformSignature(body, now + 3600)],
    ];
    for (const [what, signature] of tries) {
      const res = await postWebhook(h.service.baseUrl, body, { signature });
      expect(res.status, what).to.equal(401);
      expect(res.body.code, what).to.equal('UNAUTHORIZED');
    }
    // Within the configured window (120 s) the same body is taken.
    const late = await postWebhook(h.service.baseUrl, body, { signature: platformSignature(body, now - 100) });
    expect(late.status, late.text).to.equal(200);
    // Accepted, not a duplicate: none of the refused calls recorded the notification.
    expect(late.body.data.status).to.equal('accepted');
    await waitForJob(h.redis, late.body.data.jobId);
    expect(await keysOfPlayer(h.redis, ws.workspaceId, userId)).to.deep.equal([]);
  });

  it('refuses malformed bodies with 400 (the signature good), erasing nothing', async () => {
    const { ws, userId } = await setUp(h);
    const bodies = [
      '{not json',
      JSON.stringify({ EventType: 'RightToErasureRequest' }),
      JSON.stringify({ NotificationId: 'x', EventType: 'RightToErasureRequest', EventPayload: { GameIds: [1] } }),
      JSON.stringify({ NotificationId: 'x', EventType: 'RightToErasureRequest', EventPayload: { UserId: userId, GameIds: [] } }),
      JSON.stringify({ NotificationId: 'x', EventType: 'RightToErasureRequest', EventPayload: { UserId: -3, GameIds: [1] } }),
      JSON.stringify({ NotificationId: 'x', EventType: 'RightToErasureRequest' }),
      '[]',
    ];
    for (const body of bodies) {
      const res = await postWebhook(h.service.baseUrl, body);
      expect(res.status, body).to.equal(400);
      expect(res.body.code, body).to.equal('INVALID_REQUEST');
    }
    expect(await keysOfPlayer(h.redis, ws.workspaceId, userId)).to.have.length.greaterThan(0);
  });

  it('answers the dashboard\'s SampleNotification 200 and changes nothing', async () => {
    const { ws, userId } = await setUp(h);
    const before = await testOps(h.redis).erasures.list({ limit: 1 });
    const body = JSON.stringify({ NotificationId: `sample-${userId}`, EventType: 'SampleNotification', EventTime: new Date().toISOString(), EventPayload: { UserId: userId } });
    const res = await postWebhook(h.service.baseUrl, body);
    expect(res.status, res.text).to.equal(200);
    expect(res.body.data).to.deep.equal({ notificationId: `sample-${userId}`, status: 'ignored', jobId: null });
    const after = await testOps(h.redis).erasures.list({ limit: 1 });
    expect(after.counts.requested).to.equal(before.counts.requested);
    expect(await keysOfPlayer(h.redis, ws.workspaceId, userId)).to.have.length.greaterThan(0);
  });

  it('answers a repeated NotificationId 200 doing nothing, even after the player wrote new data', async () => {
    const { ws, gameId, userId } = await setUp(h);
    const body = erasureNotification(userId, [gameId]);
    const first = await postWebhook(h.service.baseUrl, body);
    await waitForJob(h.redis, first.body.data.jobId);
    await playerWith(h.service, ws, userId, 'came back');
    // A redelivery re-signs the same body later; the platform retries up to 5 times.
    for (let i = 0; i < 3; i++) {
      const again = await postWebhook(h.service.baseUrl, body, { signature: platformSignature(body, Math.floor(Date.now() / 1000) - i) });
      expect(again.status, again.text).to.equal(200);
      expect(again.body.data).to.deep.include({ status: 'duplicate', jobId: first.body.data.jobId });
    }
    await new Promise((resolve) => setTimeout(resolve, 1500));
    const read = await call(h.service, 'GET', `/data?userId=${userId}`, { key: ws.apiKey });
    expect(read.body.data).to.deep.equal({ coins: 'came back' });
  });

  it('keeps a request for a game no workspace serves (unmapped), shows it to operators, and finishes it once the game is mapped', async () => {
    const { ws, gameId, userId } = await setUp(h);
    const unknownGame = freshGameId();
    const other = await testOps(h.redis).createWorkspace({ name: 'later', plan: 'pro' });
    await playerWith(h.service, other, userId);
    const res = await postWebhook(h.service.baseUrl, erasureNotification(userId, [gameId, unknownGame]));
    const jobId = res.body.data.jobId as string;
    const parked = await waitForJob(h.redis, jobId, ['unmapped']);
    expect(JSON.parse(parked['unmappedGames']!)).to.deep.equal([String(unknownGame)]);
    expect(await keysOfPlayer(h.redis, ws.workspaceId, userId)).to.deep.equal([]);
    expect(await keysOfPlayer(h.redis, other.workspaceId, userId)).to.have.length.greaterThan(0);
    const shown = await adminCall(h.service, 'GET', '/erasures?state=unmapped&limit=500');
    expect(shown.status).to.equal(200);
    const listed = (shown.body.data.jobs as Array<{ jobId: string; unmappedGames: string[] }>).find((j) => j.jobId === jobId);
    expect(listed?.unmappedGames).to.deep.equal([String(unknownGame)]);
    const mapped = await adminCall(h.service, 'PUT', `/workspaces/${other.workspaceId}/games`, { body: { gameIds: [unknownGame] } });
    expect(mapped.status, mapped.text).to.equal(200);
    expect(mapped.body.data.requeued).to.deep.equal([jobId]);
    const done = await waitForJob(h.redis, jobId);
    expect(done).to.not.have.property('userId');
    expect(await keysOfPlayer(h.redis, other.workspaceId, userId)).to.deep.equal([]);
  });

  it('refuses a body over 64 KiB (413) and a compressed one (415) before erasing anything', async () => {
    const { ws, gameId, userId } = await setUp(h);
    const big = JSON.stringify({ ...JSON.parse(erasureNotification(userId, [gameId])), padding: 'x'.repeat(70_000) });
    expect((await postWebhook(h.service.baseUrl, big)).status).to.equal(413);
    const body = erasureNotification(userId, [gameId]);
    expect((await postWebhook(h.service.baseUrl, body, { headers: { 'content-encoding': 'gzip' } })).status).to.equal(415);
    expect(await keysOfPlayer(h.redis, ws.workspaceId, userId)).to.have.length.greaterThan(0);
  });

  it('takes no method but POST', async () => {
    const res = await call(h.service, 'GET', '/webhooks/roblox');
    expect(res.status).to.equal(405);
    expect(res.headers.get('allow')).to.include('POST');
  });
});

describe('the platform webhook, its budget of failed signatures, and the gate', function () {
  this.timeout(30_000);

  it('answers 429 past AUTH_FAILURES_PER_MINUTE bad signatures from one address, without reading the body', async () => {
    const service = await startTestService({ ...ERASURE_ENV, AUTH_FAILURES_PER_MINUTE: '3', TRUST_PROXY_HOPS: '1' });
    try {
      const address = freshIPv4();
      const body = erasureNotification(freshUserId(), [freshGameId()]);
      const bad = platformSignature(body, Math.floor(Date.now() / 1000), 'a-guessed-secret-value');
      const statuses = [];
      for (let i = 0; i < 5; i++) statuses.push((await postWebhook(service.baseUrl, body, { signature: bad, headers: via(address) })).status);
      expect(statuses).to.deep.equal([401, 401, 401, 429, 429]);
      const limited = await postWebhook(service.baseUrl, body, { headers: via(address) });
      expect(limited.status).to.equal(429);
      // Refused before the body is read: one over the size limit is 429 too, not 413.
      expect((await postWebhook(service.baseUrl, 'x'.repeat(100_000), { headers: via(address) })).status).to.equal(429);
      expect(Number(limited.headers.get('retry-after'))).to.be.within(1, 60);
      // Another address is not held back by the first one's failures.
      expect((await postWebhook(service.baseUrl, body, { headers: via(freshIPv4()) })).status).to.equal(200);
    } finally {
      await service.close();
    }
  });

  it('is reachable with GATE_MODE=enforce, and its caller is never banned for calling it', async () => {
    const service = await startTestService({ ...ERASURE_ENV, GATE_MODE: 'enforce', TRUST_PROXY_HOPS: '1' });
    const redis = testRedis();
    const caller = freshIPv4();
    try {
      const headers = via(caller, { 'user-agent': CURL_UA });
      const body = erasureNotification(freshUserId(), [freshGameId()]);
      const ok = await postWebhook(service.baseUrl, body, { headers });
      expect(ok.status, ok.text).to.equal(200);
      const refused = await postWebhook(service.baseUrl, body, { signature: 't=1,v1=AAAA', headers });
      expect(refused.status).to.equal(401);
      expect(await redis.hexists(keys.bans(), caller)).to.equal(0);
      // The same caller on a gated path is a violation, and banned: the gate is on.
      const gated = await call(service, 'GET', '/ping', { headers });
      expect(gated.status).to.equal(403);
      expect(await redis.hexists(keys.bans(), caller)).to.equal(1);
    } finally {
      await testOps(redis).bans.removeBan(caller).catch(() => undefined);
      redis.disconnect();
      await service.close();
    }
  });

  it('logs each refusal with its reason, never the body, and never logs the user id', async () => {
    const logs = new LogCapture();
    const config = testConfig({ ...ERASURE_ENV, LOG_LEVEL: 'debug' });
    const service = await startService(config, createLogger(config, logs));
    const redis = testRedis();
    try {
      const userId = freshUserId();
      const gameId = freshGameId();
      const body = erasureNotification(userId, [gameId], `marker-${gameId}`);
      const now = Math.floor(Date.now() / 1000);
      expect((await postWebhook(service.baseUrl, body, { signature: platformSignature(body, now, 'a-wrong-secret-value') })).status).to.equal(401);
      expect((await postWebhook(service.baseUrl, body, { signature: platformSignature(body, now - 3600) })).status).to.equal(401);
      expect((await postWebhook(service.baseUrl, body, { signature: null })).status).to.equal(401);
      const accepted = await postWebhook(service.baseUrl, body);
      await waitForJob(redis, accepted.body.data.jobId, ['unmapped']);
      const refusals = logs.lines.map((l) => JSON.parse(l) as Record<string, unknown>).filter((l) => l['msg'] === 'roblox webhook refused');
      expect(refusals.map((l) => l['reason'])).to.deep.equal(['signature', 'stale', 'signature-header']);
      expect(logs.text).to.not.include(String(userId));
      expect(logs.text).to.not.include('EventPayload');
    } finally {
      redis.disconnect();
      await service.close();
    }
  });

  it('answers 409 and logs an error when this instance\'s digest secret is not the installation\'s', async () => {
    const logs = new LogCapture();
    const config = testConfig({ ROBLOX_WEBHOOK_SECRET: WEBHOOK_SECRET, ERASURE_DIGEST_SECRET: 'a-different-digest-secret-00', LOG_LEVEL: 'info' });
    const redis = testRedis();
    // The installation's secret is the tests' own (stored by its first use).
    await testOps(redis, { config: testConfig(ERASURE_ENV) }).erasures.list({ userId: 1, limit: 1 });
    const service = await startService(config, createLogger(config, logs));
    try {
      const res = await postWebhook(service.baseUrl, erasureNotification(freshUserId(), [freshGameId()]));
      expect(res.status).to.equal(409);
      expect(res.body.code).to.equal('ERASURE_NOT_CONFIGURED');
      const errors = logs.lines.map((l) => JSON.parse(l) as Record<string, unknown>).filter((l) => l['level'] === 50);
      expect(errors.map((l) => l['msg'])).to.include('roblox webhook: an erasure request could not be recorded');
    } finally {
      redis.disconnect();
      await service.close();
    }
  });

  it('does not exist without ROBLOX_WEBHOOK_SECRET (404)', async () => {
    const service = await startTestService({});
    try {
      const res = await postWebhook(service.baseUrl, erasureNotification(freshUserId(), [freshGameId()]));
      expect(res.status).to.equal(404);
      expect(res.body.code).to.equal('NOT_FOUND');
    } finally {
      await service.close();
    }
  });
});
