// A workspace's heavy requests (a body over LARGE_BYTES as it decodes: plain, chunked or
// compressed; a whole-player read of a player over it) take one turn per workspace on an
// instance (http/byte-budget.ts), held until the answer's last byte is sent: a second one waits
// until the first has answered, so a neighbour waits behind one heavy request of that workspace,
// never several back to back. Real Redis behind a proxy that holds the first request's reply
// (and every later one): what the service sent meanwhile shows which requests had started.
import { once } from 'node:events';
import { request, type Server } from 'node:http';
import { connect, type AddressInfo } from 'node:net';
import { Readable } from 'node:stream';
import { expect } from 'chai';
import { Redis } from 'ioredis';
import Koa from 'koa';
import { ByteBudget, HEAVY_TURN_SEND_MS } from '../../src/http/byte-budget.js';
import type { AppState } from '../../src/http/state.js';
import type { CreatedWorkspace } from '../../src/admin/operations.js';
import type { RunningService } from '../../src/server.js';
import { SCRIPTS } from '../../src/store/redis/scripts.js';
import { testRedisUrl } from '../support/hooks.js';
import { startRedisProxy, type RedisProxy } from '../support/redis-proxy.js';
import { call, client, newWorkspace, startTestService, useService } from '../support/service.js';

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

describe('heavy requests run one at a time per workspace', () => {
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

  it("a large set waits while the workspace's whole read of a large player is in flight", async () => {
    expect((await call(service, 'POST', '/data/set', { key: a.apiKey, rawBody: bigSet('reader', 'stored'), headers: { 'content-type': 'application/json' } })).status).to.equal(200);
    proxy.reset();
    // The read's second step, HGETALL on the bulk connection, is held: the read has its turn then.
    const hgetall = /\$7\r\nhgetall\r\n/i; // the command itself, not a script's text that names it
    proxy.holdFrom(hgetall);
    const read = client(service, a.apiKey).get('/data?userId=reader');
    await sleep(200);
    expect(proxy.sent(), 'the read reached its HGETALL').to.match(hgetall);
    const write = senders.plain!(bigSet('p4', 'after-read'));
    await sleep(500);
    expect(proxy.sent(), 'the large set waits for the read').not.to.include('after-read:x');
    proxy.release();
    const [readAnswer, status] = await Promise.all([read, write]);
    expect(readAnswer.status).to.equal(200);
    expect(status).to.equal(200);
    expect(proxy.sent()).to.include('after-read:x');
  });
});

describe("a workspace's heavy turn is held until the answer's last byte is sent", () => {
  // The ByteBudget's middleware in a Koa app of its own: the turn's end is the response's, which
  // no Redis reply shows. A slow answer streamed over 600 ms; a second heavy request of the
  // workspace starts after it ends, another workspace's at once.
  let server: Server;
  let base: string;
  const started: Record<string, number> = {};
  let release!: () => void;
  const released = new Promise<void>((r) => (release = r));

  before(async () => {
    const app = new Koa<AppState>();
    const budget = new ByteBudget(64 * 1024 * 1024, 4 * 1024 * 1024);
    app.use(async (ctx, next) => {
      ctx.state.principal = { workspace: { id: String(ctx.query['ws']) } } as AppState['principal'];
      await next();
    });
    app.use(budget.requests(1024 * 1024));
    app.use(async (ctx) => {
      if (ctx.query['after'] === 'release') await released;
      await ctx.state.heavyTurn!();
      await ctx.state.heavyTurn!(); // the same turn: taking it twice does not wait for itself
      started[String(ctx.query['name'])] = Date.now();
      if (ctx.query['slow'] === '1') {
        let sent = 0;
        ctx.body = new Readable({
          read() {
            setTimeout(() => this.push(sent++ < 6 ? 'x'.repeat(1000) : null), 100);
          },
        });
      } else {
        ctx.body = 'ok';
      }
    });
    server = app.listen(0, '127.0.0.1');
    await once(server, 'listening');
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  after(() => new Promise<void>((done) => server.close(() => done())));

  it('waits for the answer to be sent, not for the handler to return', async () => {
    const t0 = Date.now();
    const slow = fetch(`${base}/?ws=w1&name=slow&slow=1`).then(async (r) => ({ text: await r.text(), endedAt: Date.now() }));
    await sleep(50);
    const sameWorkspace = fetch(`${base}/?ws=w1&name=same`).then((r) => r.text());
    const otherWorkspace = fetch(`${base}/?ws=w2&name=other`).then((r) => r.text());
    const [answer] = await Promise.all([slow, sameWorkspace, otherWorkspace]);
    expect(answer.text).to.have.length(6000);
    expect(started['other']! - t0, "another workspace's heavy request does not wait").to.be.below(400);
    expect(started['same']!, "the workspace's next heavy request starts once the answer was sent").to.be.at.least(started['slow']! + 550);
  });

  it('is left HEAVY_TURN_SEND_MS after the handler returned when the answer cannot be sent: two requests pipelined on one connection', async () => {
    // The first asks for the turn late (once released), the second at once: the second has the
    // turn, and its answer waits behind the first's on the connection, whose request waits for
    // the turn. Without the bound neither would ever be answered.
    const socket = connect(Number(new URL(base).port), '127.0.0.1');
    let received = '';
    socket.setEncoding('latin1');
    socket.on('data', (chunk: string) => (received += chunk));
    socket.write('GET /?ws=w3&name=piped-first&after=release HTTP/1.1\r\nHost: x\r\n\r\nGET /?ws=w3&name=piped-second HTTP/1.1\r\nHost: x\r\n\r\n');
    await sleep(100);
    expect(started['piped-second'], 'the second request has the turn').to.be.a('number');
    release();
    const t0 = Date.now();
    while ((received.match(/HTTP\/1\.1 \d+/g) ?? []).length < 2 && Date.now() - t0 < 3000) await sleep(20);
    socket.destroy();
    expect(received.match(/HTTP\/1\.1 \d+/g), 'both answered').to.deep.equal(['HTTP/1.1 200', 'HTTP/1.1 200']);
    expect(started['piped-first']! - started['piped-second']!).to.be.within(HEAVY_TURN_SEND_MS - 50, HEAVY_TURN_SEND_MS + 1000);
  });
});

describe("a workspace's writes run one at a time, each checking the debt the one before left", () => {
  // What a write's script copies inside Redis (a restore point of all a delete replaces) is
  // paid after it ran: sent side by side, every write would run before the first was paid for.
  let shift = 0;
  const t = useService({ WORKSPACE_BYTES_PER_SECOND: '100000', MAX_PLAYER_BYTES: '200000' }, { clock: () => Date.now() + shift });
  // A second instance on the same Redis, with the same clock and no byte budget (0 turns it off; a fast
  // one still has a burst of MAX_PLAYER_BYTES, which two 150 KB writes a few ms apart overran): it writes
  // the players a test starts from and reads back what it left, so that the tested instance's
  // bucket (each instance keeps its own) is full when the test begins, with no wait for its refill.
  const setup = useService({ WORKSPACE_BYTES_PER_SECOND: '0', MAX_PLAYER_BYTES: '200000' }, { clock: () => Date.now() + shift });
  const VALUE = 'v'.repeat(150_000);

  it('refuses the concurrent deletes of everything that come after one that left the workspace in debt', async () => {
    const ws = await newWorkspace(t.redis);
    const api = client(t.service, ws.apiKey);
    const unlimited = client(setup.service, ws.apiKey);
    for (const userId of ['d1', 'd2', 'd3']) expect((await unlimited.post('/data/set', { userId, key: 'k', value: VALUE })).status).to.equal(200);
    // A new restore-point interval: each delete records the 150 KB it replaces.
    shift += 300_000;
    const answers = await Promise.all(['d1', 'd2', 'd3'].map((userId) => api.post('/data/delete', { userId })));
    // The first one's script read and copied 300 KB (the value it replaced, into its restore
    // point): past the 200 KB burst, so the others, each checking once it has its turn, wait.
    const statuses = answers.map((a) => a.status).sort();
    expect(statuses, answers.map((a) => a.text).join('\n')).to.deep.equal([200, 429, 429]);
    const refused = answers.find((a) => a.status === 429)!;
    expect(refused.body.error).to.match(/byte budget/);
    expect(refused.headers.get('retry-after')).to.match(/^\d+$/);
    // Nothing of the refused one was written: its player still holds its value.
    const kept = ['d1', 'd2', 'd3'][answers.indexOf(refused)]!;
    const still = await unlimited.get(`/data?userId=${kept}&key=k`);
    expect(still.status, still.text).to.equal(200);
  });

  it("runs a batch's players one after another: past the budget the rest are refused 429 each, unwritten", async () => {
    const ws = await newWorkspace(t.redis);
    const api = client(t.service, ws.apiKey);
    const unlimited = client(setup.service, ws.apiKey);
    const users = ['b1', 'b2', 'b3'];
    for (const userId of users) expect((await unlimited.post('/data/set', { userId, key: 'k', value: VALUE })).status).to.equal(200);
    shift += 300_000;
    // Sent side by side, all three deletes of everything ran before the first was paid for.
    const answer = await api.post('/data/batch', { players: users.map((userId) => ({ userId, ops: [{ op: 'delete', key: 'k' }] })) });
    expect(answer.status, answer.text).to.equal(200);
    const players = answer.body.data.players as Array<{ userId: string; success: boolean; status?: number; code?: string }>;
    expect(players.map((p) => [p.userId, p.success, p.status ?? 200, p.code ?? ''])).to.deep.equal([
      ['b1', true, 200, ''],
      ['b2', false, 429, 'RATE_LIMITED'],
      ['b3', false, 429, 'RATE_LIMITED'],
    ]);
    expect(answer.headers.get('retry-after'), 'the refused players\' Retry-After, on the answer').to.match(/^[1-9]\d*$/);
    expect((await unlimited.get('/data?userId=b1&key=k')).status).to.equal(404);
    for (const userId of ['b2', 'b3']) expect((await unlimited.get(`/data?userId=${userId}&key=k`)).status, userId).to.equal(200);
  });

  it("charges a batch's copies summed over the request: players each under LARGE_BYTES still add up, and past the budget the rest are refused", async () => {
    const ws = await newWorkspace(t.redis);
    const api = client(t.service, ws.apiKey);
    // 25 KB values: each set's body, and each delete's work (the value read and copied into its
    // restore point, about 50 KB), stays under LARGE_BYTES (64 KiB), so none is charged alone.
    const users = Array.from({ length: 10 }, (_, i) => `s${i}`);
    const small = 'v'.repeat(25_000);
    for (const userId of users) expect((await api.post('/data/set', { userId, key: 'k', value: small })).status).to.equal(200);
    shift += 300_000;
    // Ten of them copy about 500 KB, past the 200 KB burst: uncharged, every player was written.
    const answer = await api.post('/data/batch', { players: users.map((userId) => ({ userId, ops: [{ op: 'delete', key: 'k' }] })) });
    expect(answer.status, answer.text).to.equal(200);
    const statuses = (answer.body.data.players as Array<{ status?: number }>).map((p) => p.status ?? 200);
    expect(statuses[0], answer.text).to.equal(200);
    expect(statuses[statuses.length - 1], answer.text).to.equal(429);
    const written = statuses.indexOf(429);
    expect(statuses.slice(written).every((s) => s === 429), statuses.join(' ')).to.equal(true);
    // The refused ones still hold their value.
    const unlimited = client(setup.service, ws.apiKey);
    expect((await unlimited.get(`/data?userId=${users[written]}&key=k`)).status).to.equal(200);
    expect((await unlimited.get(`/data?userId=${users[0]}&key=k`)).status).to.equal(404);
  });

  it('applies the players a batch had refused once, when it is sent again with its Idempotency-Key, and the others not again', async () => {
    const ws = await newWorkspace(t.redis);
    const api = client(t.service, ws.apiKey);
    expect((await client(setup.service, ws.apiKey).post('/data/set', { userId: 'i1', key: 'k', value: VALUE })).status).to.equal(200);
    shift += 300_000;
    const body = { players: [{ userId: 'i1', ops: [{ op: 'delete', key: 'k' }] }, { userId: 'i2', ops: [{ op: 'increment', key: 'coins', amount: 5 }] }] };
    const send = () => call(t.service, 'POST', '/data/batch', { key: ws.apiKey, body, headers: { 'idempotency-key': 'retry-the-refused' } });
    const first = await send();
    expect(first.body.data.players.map((p: { status?: number }) => p.status ?? 200), first.text).to.deep.equal([200, 429]);
    // Out of debt once the Retry-After it answered has passed.
    expect(first.headers.get('retry-after')).to.match(/^[1-9]\d*$/);
    await sleep(Number(first.headers.get('retry-after')) * 1000 + 100);
    const second = await send();
    expect(second.body.data.players.map((p: { status?: number }) => p.status ?? 200), second.text).to.deep.equal([200, 200]);
    expect(second.body.data.players[1].results[0].value).to.equal(5);
    // All in now: a third is the kept answer, with nothing written again.
    const third = await send();
    expect(third.headers.get('idempotent-replayed')).to.equal('true');
    expect(third.body.data.players.map((p: { results: Array<{ value?: number; deleted?: number }> }) => p.results[0])).to.deep.equal([
      second.body.data.players[0].results[0],
      { key: 'coins', value: 5 },
    ]);
    expect((await api.get('/data?userId=i2&key=coins')).body.data.value).to.equal(5);
  });

  type Api = ReturnType<typeof client>;
  type Answer = Awaited<ReturnType<Api['post']>>;
  /**
   * A workspace's `first` request, then its `second` 200 ms later, through a service whose Redis
   * is behind a proxy that holds every command from the first of the script `scriptName` (by its
   * SHA-1, or by `header`, its header's first words, when it is sent whole): what
   * the service had sent 400 ms later, and both answers once the proxy lets go. `warm` runs
   * before, so that the two need Redis for their scripts only (the key cached, a lease taken, the
   * storage total read).
   */
  async function secondWhileFirstHeld(
    scriptName: string,
    header: string,
    warm: (api: Api) => Promise<Answer>,
    first: (api: Api) => Promise<Answer>,
    second: (api: Api) => Promise<Answer>,
  ): Promise<{ sent: string; answers: Answer[]; sentAfter: string }> {
    const a = await newWorkspace(t.redis);
    const script = SCRIPTS.find((s) => s.name === scriptName)!;
    const proxy = await startRedisProxy(Number(new URL(testRedisUrl()).port));
    const service = await startTestService({ REDIS_URL: proxy.url, REDIS_COMMAND_TIMEOUT_MS: '5000' });
    try {
      const viaA = client(service, a.apiKey);
      expect((await warm(viaA)).status).to.equal(200);
      proxy.reset();
      proxy.holdFrom(new RegExp(`${script.sha1}|${header}`));
      const answering = [first(viaA)];
      await sleep(200);
      answering.push(second(viaA));
      await sleep(400);
      const sent = proxy.sent();
      proxy.release();
      const answers = await Promise.all(answering);
      return { sent, answers, sentAfter: proxy.sent() };
    } finally {
      proxy.release();
      await service.close();
      await proxy.close();
    }
  }

  it('runs a second write of the workspace once the first has answered', async () => {
    // (Another workspace's does not wait: the gate keeps a count per workspace, test/domain/workspace-gate.test.ts.)
    const { sent, answers, sentAfter } = await secondWhileFirstHeld(
      'writePlayer',
      'Apply a player.s write',
      (api) => api.post('/data/set', { userId: 'warm', key: 'k', value: 1 }),
      (api) => api.post('/data/set', { userId: 'w1', key: 'k', value: 'first-of-a' }),
      (api) => api.post('/data/set', { userId: 'w2', key: 'k', value: 'second-of-a' }),
    );
    expect(sent).to.include('first-of-a');
    expect(sent, "the workspace's second write waits for the first").not.to.include('second-of-a');
    expect(answers.map((r) => r.status)).to.deep.equal([200, 200]);
    expect(sentAfter).to.include('second-of-a');
  });

  it("runs a second many-player session call of the workspace once the first one's scripts have answered", async () => {
    // 100 players a request at a plan's burst of 300 requests was 30,000 session scripts at once.
    const { sent, answers } = await secondWhileFirstHeld(
      'playerSession',
      'Acquire, renew or release',
      (api) => api.post('/sessions/acquire', { players: ['warm1', 'warm2'], owner: 'warm' }),
      (api) => api.post('/sessions/acquire', { players: ['f1', 'f2', 'f3'], owner: 'first-of-a' }),
      (api) => api.post('/sessions/acquire', { players: ['s1', 's2', 's3'], owner: 'second-of-a' }),
    );
    expect(sent.split('first-of-a').length - 1, "all of the first request's players side by side").to.equal(3);
    expect(sent, "the workspace's second request waits for the first").not.to.include('second-of-a');
    expect(answers.map((r) => r.status)).to.deep.equal([200, 200]);
    expect(answers.flatMap((r) => r.body.data.players.map((p: { success: boolean }) => p.success))).to.deep.equal(Array(6).fill(true));
  });
});

describe('answers built of many small parts are paid for', () => {
  // Each player read whole in one step, and each message, is under LARGE_BYTES and was not
  // charged alone; one acquire loads up to 100 players, one batch hands up to 64 KiB of messages
  // to each of its 100 players, one read of messages answers up to 100 of 16 KiB.
  const t = useService({ WORKSPACE_BYTES_PER_SECOND: '100000', MAX_PLAYER_BYTES: '200000' });
  // Another instance, with no byte budget (0 turns it off), writes a large player a test starts from: the
  // tested instance's bucket stays full, with no wait for its refill.
  const setup = useService({ WORKSPACE_BYTES_PER_SECOND: '0', MAX_PLAYER_BYTES: '200000' });
  const SMALL = 'v'.repeat(25_000);

  async function fill(api: ReturnType<typeof client>, userIds: string[], value = SMALL) {
    for (const userId of userIds) expect((await api.post('/data/set', { userId, key: 'k', value })).status).to.equal(200);
  }

  it('takes concurrent many-player loads of the workspace one at a time, each refused while the one before left a debt', async () => {
    const ws = await newWorkspace(t.redis);
    const api = client(t.service, ws.apiKey);
    const users = Array.from({ length: 10 }, (_, i) => `m${i}`);
    await fill(api, users);
    // Each answer carries 10 x 25 KB, past the 200 KB burst. Side by side, all three were read and answered.
    const answers = await Promise.all(['o1', 'o2', 'o3'].map((owner) => api.post('/sessions/acquire', { players: users, owner, load: true, steal: true })));
    const statuses = answers.map((a) => a.status).sort();
    expect(statuses, answers.map((a) => a.text.slice(0, 200)).join('\n')).to.deep.equal([200, 429, 429]);
    const loaded = answers.find((a) => a.status === 200)!;
    expect(loaded.body.data.players.every((p: { values?: { k?: string } }) => p.values?.k === SMALL)).to.equal(true);
    expect(answers.find((a) => a.status === 429)!.body.error).to.match(/byte budget/);
  });

  it('charges the small players of an answer that also holds a large one charged before it was read', async () => {
    const ws = await newWorkspace(t.redis);
    const api = client(t.service, ws.apiKey);
    await fill(client(setup.service, ws.apiKey), ['large'], 'L'.repeat(70_000));
    const small = Array.from({ length: 5 }, (_, i) => `n${i}`);
    await fill(api, small);
    // 70 KB charged before its read, then 125 KB of small players: 195 of the 200 KB burst.
    const answer = await api.post('/sessions/acquire', { players: ['large', ...small], owner: 'mix', load: true });
    expect(answer.status, answer.text.slice(0, 300)).to.equal(200);
    // With only the large player paid for, 130 KB would be left: enough for another 70 KB body.
    const next = await api.post('/data/set', { userId: 'other', key: 'k', value: 'L'.repeat(70_000) });
    expect(next.status, next.text).to.equal(429);
    expect(next.body.error).to.match(/byte budget/);
  });
  /** `count` messages of 15 KB to each player: each request under LARGE_BYTES. */
  async function sendMessages(api: ReturnType<typeof client>, userIds: string[], count: number) {
    for (const userId of userIds) {
      for (let i = 0; i < count; i++) {
        const sent = await api.post('/messages', { userId, message: { gift: 'g'.repeat(15_000) } });
        expect(sent.status, sent.text.slice(0, 200)).to.equal(200);
      }
    }
  }

  it("charges the messages a batch hands its players' sessions as each player's are handed: past the budget the rest are refused", async () => {
    const ws = await newWorkspace(t.redis);
    const api = client(t.service, ws.apiKey);
    const users = Array.from({ length: 10 }, (_, i) => `h${i}`);
    const acquired = await api.post('/sessions/acquire', { players: users, owner: 'server' });
    expect(acquired.status).to.equal(200);
    const sessions = new Map<string, string>(acquired.body.data.players.map((p: { userId: string; sessionId: string }) => [p.userId, p.sessionId]));
    await sendMessages(api, users, 2);
    // 10 x 30 KB handed, past the 200 KB burst: charged only with the whole answer, every player was saved.
    const saved = await api.post('/data/batch', { players: users.map((userId) => ({ userId, sessionId: sessions.get(userId), ops: [{ op: 'increment', key: 'saves', amount: 1 }] })) });
    expect(saved.status, saved.text.slice(0, 300)).to.equal(200);
    const players = saved.body.data.players as Array<{ status?: number; messages?: unknown[] }>;
    const statuses = players.map((p) => p.status ?? 200);
    const refusedFrom = statuses.indexOf(429);
    expect(refusedFrom, statuses.join(' ')).to.be.greaterThan(0);
    expect(statuses.slice(refusedFrom).every((st) => st === 429), statuses.join(' ')).to.equal(true);
    expect(players[0]!.messages).to.have.length(2);
  });

  it("takes concurrent reads of a player's messages one at a time, each refused while the one before left a debt", async () => {
    const ws = await newWorkspace(t.redis);
    const api = client(t.service, ws.apiKey);
    await sendMessages(api, ['inbox'], 10);
    // Each answer carries 150 KB: the second leaves the 200 KB burst in debt. Side by side, all four were read and answered.
    const answers = await Promise.all([1, 2, 3, 4].map(() => api.get('/messages?userId=inbox')));
    expect(answers.map((a) => a.status).sort(), answers.map((a) => a.text.slice(0, 200)).join('\n')).to.deep.equal([200, 200, 429, 429]);
    expect(answers.find((a) => a.status === 200)!.body.data.messages).to.have.length(10);
  });
});
