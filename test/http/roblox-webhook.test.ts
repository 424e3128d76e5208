// The platform webhook's own limits (src/http/routes/roblox-webhook.ts), as an attacker tries
// them (issue 38): slow requests with bad signatures sent together against the budget of failed
// signatures, and game ids that no double holds exactly.
import { createHash } from 'node:crypto';
import { request } from 'node:http';
import { expect } from 'chai';
import { createLogger } from '../../src/logger.js';
import { startService, type RunningService } from '../../src/server.js';
import { keys } from '../../src/store/keys.js';
import { ERASURE_ENV, freshGameId, freshUserId, platformSignature, postWebhook, waitForJob } from '../support/erasure.js';
import { freshIPv4, via } from '../support/gate.js';
import { LogCapture } from '../support/log-capture.js';
import { testConfig, testRedis } from '../support/service.js';

/**
 * POSTs `body` to the webhook in two halves, the second once `release` resolves: a request
 * whose headers arrived and whose body is still on the way. Answers the status.
 */
function slowPost(service: RunningService, body: string, headers: Record<string, string>, release: Promise<void>): Promise<number> {
  const url = new URL(`${service.baseUrl}/webhooks/roblox`);
  return new Promise((resolve, reject) => {
    const req = request(
      { host: url.hostname, port: url.port, path: url.pathname, method: 'POST', headers: { ...headers, 'content-type': 'application/json', 'content-length': String(Buffer.byteLength(body)) } },
      (res) => {
        res.resume();
        res.on('end', () => resolve(res.statusCode!));
      },
    );
    // An answer before the whole body was sent (429) may close the connection under the write.
    req.on('error', (err) => reject(err));
    const half = Math.floor(body.length / 2);
    req.write(body.slice(0, half));
    void release.then(() => {
      if (!req.destroyed) req.end(body.slice(half));
    });
  });
}

describe('the platform webhook under attack', function () {
  this.timeout(30_000);
  const logs = new LogCapture();
  let service: RunningService;
  before(async () => {
    const config = testConfig({ ...ERASURE_ENV, AUTH_FAILURES_PER_MINUTE: '10', TRUST_PROXY_HOPS: '1', LOG_LEVEL: 'info' });
    service = await startService(config, createLogger(config, logs));
  });
  after(async () => {
    await service?.close();
  });

  it('slow requests with bad signatures sent together pass the budget of failed signatures at most AUTH_FAILURES_PER_MINUTE times', async () => {
    const address = freshIPv4();
    const body = JSON.stringify({ NotificationId: 'n-slow', EventType: 'RightToErasureRequest', EventPayload: { UserId: freshUserId(), GameIds: [1] } });
    const bad = platformSignature(body, Math.floor(Date.now() / 1000), 'a-guessed-secret-value');
    let release!: () => void;
    const released = new Promise<void>((resolve) => (release = resolve));
    const before = logs.lines.length;
    const sent = Array.from({ length: 40 }, () => slowPost(service, body, via(address, { 'roblox-signature': bad, 'user-agent': 'Roblox-Webhooks' }), released));
    // Every request's headers are in and its body half sent before any body is finished.
    await new Promise((r) => setTimeout(r, 500));
    release();
    const statuses = await Promise.all(sent);
    const count = (status: number) => statuses.filter((s) => s === status).length;
    expect(count(401), 'checked and refused').to.equal(10);
    expect(count(429), 'refused before the body was read').to.equal(30);
    const refusals = logs.lines.slice(before).filter((l) => (JSON.parse(l) as Record<string, unknown>)['msg'] === 'roblox webhook refused');
    expect(refusals).to.have.length(10);
  });
});

describe('the platform webhook and game ids no double holds exactly', function () {
  this.timeout(30_000);
  const logs = new LogCapture();
  let service: RunningService;
  let redis: ReturnType<typeof testRedis>;
  before(async () => {
    const config = testConfig({ ...ERASURE_ENV, LOG_LEVEL: 'info' });
    service = await startService(config, createLogger(config, logs));
    redis = testRedis();
  });
  after(async () => {
    await service?.close();
    redis?.disconnect();
  });

  /** A signed erasure request whose GameIds are written as `gameIdsJson`, as sent. */
  const notification = (notificationId: string, gameIdsJson: string) =>
    `{"NotificationId":"${notificationId}","EventType":"RightToErasureRequest","EventPayload":{"UserId":${freshUserId()},"GameIds":${gameIdsJson}}}`;

  for (const [what, gameIds] of [
    ['1e300', '[1e300]'],
    ['2^53 + 1, which parses as 2^53', '[9007199254740993]'],
    ['2^53 among good ones', '[5, 9007199254740992]'],
  ] as const) {
    it(`refuses a GameId of ${what} with 400, records nothing, and logs an error`, async () => {
      const notificationId = `n-big-${freshGameId()}`;
      const before = logs.lines.length;
      const res = await postWebhook(service.baseUrl, notification(notificationId, gameIds));
      expect(res.status, res.text).to.equal(400);
      expect(res.body.code).to.equal('INVALID_REQUEST');
      expect(res.body.error).to.match(/GameIds\[\d\]/).and.match(/9007199254740991/);
      expect(await redis.exists(keys.erasureNotification(createHash('sha256').update(notificationId).digest('hex')))).to.equal(0);
      const errors = logs.lines.slice(before).map((l) => JSON.parse(l) as Record<string, unknown>).filter((l) => l['level'] === 50);
      expect(errors.map((l) => l['notificationId'])).to.deep.equal([notificationId]);
    });
  }

  it('takes a game id above 2^53 exactly when it comes as its decimal digits', async () => {
    const res = await postWebhook(service.baseUrl, notification(`n-str-${freshGameId()}`, '["9007199254740993", 9007199254740991]'));
    expect(res.status, res.text).to.equal(200);
    const job = await waitForJob(redis, res.body.data.jobId, ['unmapped']);
    expect(JSON.parse(job['unmappedGames']!)).to.have.members(['9007199254740993', '9007199254740991']);
  });
});
