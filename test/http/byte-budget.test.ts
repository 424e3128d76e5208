// The per-workspace byte budget (http/byte-budget.ts): everything large a workspace moves is
// charged to it, on every path: plain, chunked and compressed bodies (as they decode), answers,
// whole-player reads and acquires with load, and the bytes a write's script copies inside Redis.
// Past the budget 429 RATE_LIMITED with Retry-After, and another workspace's budget is its own.
// Real Redis, the real HTTP server.
import { randomBytes } from 'node:crypto';
import { request } from 'node:http';
import { gzipSync } from 'node:zlib';
import { expect } from 'chai';
import { ByteBudget, LARGE_BYTES } from '../../src/http/byte-budget.js';
import { AppError } from '../../src/errors.js';
import { keys } from '../../src/store/keys.js';
import { recordResponse } from '../support/response-recorder.js';
import { client, newWorkspace, useService, type ApiResponse } from '../support/service.js';

const RATE = 100_000;
const BURST = 200_000;
const VALUE = 'v'.repeat(150_000);
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

function refusal(fn: () => void): AppError | undefined {
  try {
    fn();
  } catch (err) {
    return err as AppError;
  }
  return undefined;
}

/** Sends a body in chunks without a Content-Length (Transfer-Encoding: chunked); answers the response and whether the socket was closed. */
function chunked(baseUrl: string, path: string, apiKey: string, body: Buffer, headers: Record<string, string> = {}): Promise<ApiResponse & { closed: boolean }> {
  return new Promise((resolve, reject) => {
    const url = new URL(baseUrl + path);
    const req = request(
      { host: url.hostname, port: url.port, path: url.pathname, method: 'POST', headers: { 'content-type': 'application/json', 'x-api-key': apiKey, ...headers } },
      (res) => {
        const parts: Buffer[] = [];
        res.on('data', (c: Buffer) => parts.push(c));
        res.on('end', () => {
          const text = Buffer.concat(parts).toString();
          const fetchLike = new Response(text, { status: res.statusCode!, headers: res.headers as Record<string, string> });
          recordResponse(url.toString(), 'POST', fetchLike, text);
          resolve({ status: res.statusCode!, headers: fetchLike.headers, body: JSON.parse(text), text, closed: res.headers.connection === 'close' });
        });
      },
    );
    req.on('error', (err: NodeJS.ErrnoException) => (err.code === 'EPIPE' || err.code === 'ECONNRESET' ? undefined : reject(err)));
    // 16 KiB at a time, each its own chunk.
    let at = 0;
    const pump = () => {
      while (at < body.length) {
        const more = req.write(body.subarray(at, at + 16_384));
        at += 16_384;
        if (!more) return void req.once('drain', pump);
      }
      req.end();
    };
    pump();
  });
}

describe('the byte budget per workspace', () => {
  describe('ByteBudget', () => {
    it('refills at its rate up to its burst, charges only large transfers, and lets an oversize one through when full', () => {
      let now = 0;
      const budget = new ByteBudget(RATE, BURST, () => now);
      budget.charge('a', LARGE_BYTES); // not charged
      budget.charge('a', 150_000);
      const refused = refusal(() => budget.charge('a', 150_000));
      expect(refused).to.be.instanceOf(AppError);
      expect(refused!.status).to.equal(429);
      expect(refused!.headers['Retry-After']).to.equal('1');
      budget.charge('b', 150_000); // its own bucket
      now += 1000;
      budget.charge('a', 150_000);
      // Larger than the burst: waits for a full bucket, then passes and leaves a debt.
      now += 10_000;
      budget.charge('a', 500_000);
      expect(() => budget.charge('a', 100_000)).to.throw(AppError);
      expect(() => new ByteBudget(0, BURST, () => now).charge('a', 10_000_000)).not.to.throw();
    });

    it('debits work already done, into a debt of at most one burst, and refuses every request of a workspace in debt until it is paid', () => {
      let now = 0;
      const budget = new ByteBudget(RATE, BURST, () => now);
      budget.debit('a', LARGE_BYTES); // not charged
      budget.refuseInDebt('a');
      budget.debit('a', 5_000_000); // a huge copy: the debt stops at one burst
      const refused = refusal(() => budget.refuseInDebt('a'));
      expect(refused?.status).to.equal(429);
      // From -BURST, back to zero takes BURST / RATE = 2 s.
      expect(refused!.headers['Retry-After']).to.equal('2');
      budget.refuseInDebt('b');
      now += 1999;
      expect(() => budget.refuseInDebt('a')).to.throw(AppError);
      now += 1;
      budget.refuseInDebt('a');
    });
  });

  describe('over HTTP', () => {
    // The service's clock runs at real speed from 1 s into a restore-point interval (300 s): no
    // interval starts during these tests, where a delete that opened a new point would copy the
    // 150 KB value once more and leave the workspace in debt (it failed so once in a full run).
    const INTERVAL_MS = 300_000;
    const shift = Math.ceil(Date.now() / INTERVAL_MS) * INTERVAL_MS + 1000 - Date.now();
    const t = useService({ WORKSPACE_BYTES_PER_SECOND: String(RATE), MAX_PLAYER_BYTES: String(BURST) }, { clock: () => Date.now() + shift });
    // A second instance on the same Redis, with the same clock and no byte budget (0 turns it off), writes
    // the players a test starts from: each instance keeps its own buckets, so the tested one's is
    // full when the test begins, as after a wait for its refill.
    const setup = useService({ WORKSPACE_BYTES_PER_SECOND: '0', MAX_PLAYER_BYTES: String(BURST) }, { clock: () => Date.now() + shift });
    const budgetFull = () => sleep(((2 * BURST) / RATE) * 1000 + 100); // from the deepest debt

    it('answers A 429 with Retry-After past its budget while B is served, and B has a budget of its own', async () => {
      const [a, b] = [await newWorkspace(t.redis), await newWorkspace(t.redis)];
      const [apiA, apiB] = [client(t.service, a.apiKey), client(t.service, b.apiKey)];
      expect((await apiA.post('/data/set', { userId: 'big', key: 's', value: 1 })).status).to.equal(200);
      expect((await apiA.post('/data/set', { userId: 'big', key: 'k', value: VALUE })).status).to.equal(200);
      // Its 150 KB body and the answer echoing it: 300 KB, past the burst. A workspace in debt
      // waits, whatever it sends.
      expect((await apiA.post('/data/set', { userId: 'big', key: 's', value: 2 })).status).to.equal(429);
      expect((await apiB.post('/data/set', { userId: 'big', key: 'k', value: VALUE })).status).to.equal(200);
      await budgetFull();

      expect((await apiA.get('/data?userId=big')).status).to.equal(200);
      const refused = await apiA.get('/data?userId=big');
      expect(refused.status).to.equal(429);
      expect(refused.body).to.include({ success: false, code: 'RATE_LIMITED' });
      expect((refused.body as { error: string }).error).to.match(/byte budget/).and.match(/not the plan's request limit/);
      expect(Number(refused.headers.get('retry-after'))).to.be.within(1, 2);
      // A's small reads are not charged.
      expect((await apiA.get('/data?userId=big&key=s')).status).to.equal(200);
      // A large body is refused before it is read, and writes nothing.
      const write = await apiA.post('/data/set', { userId: 'big', key: 'k2', value: VALUE });
      expect(write.status).to.equal(429);
      expect(await t.redis.hexists(keys.player(a.workspaceId, 'big'), 'k2')).to.equal(0);

      // B, on the same instance at the same time: served, twice at most within its own burst.
      expect((await apiB.get('/data?userId=big')).status).to.equal(200);
      expect((await apiB.get('/data?userId=big')).status).to.equal(429);

      await sleep(Number(refused.headers.get('retry-after')) * 1000 + 100);
      expect((await apiA.get('/data?userId=big')).status).to.equal(200);
    });

    it('charges a compressed body by what it decodes to, and a chunked one as it arrives: cut off mid-stream, nothing written', async () => {
      const ws = await newWorkspace(t.redis);
      const api = client(t.service, ws.apiKey);
      // Each body to a player of its own: two would not fit in one (MAX_PLAYER_BYTES).
      const body = (key: string) => Buffer.from(JSON.stringify({ userId: key, key, value: VALUE }));
      // 150 KB of JSON compress to a few hundred bytes: the declared length says nothing.
      const gz = (key: string) => gzipSync(body(key));
      expect(gz('g1').length).to.be.below(2000);
      const send = (key: string) => api.post('/data/set', undefined, { rawBody: gz(key), headers: { 'content-type': 'application/json', 'content-encoding': 'gzip' } });
      expect((await send('g1')).status).to.equal(200);
      // The answer echoes the value: another 150 KB debited. The bucket is now in debt.
      const refused = await send('g2');
      expect(refused.status, refused.text).to.equal(429);
      expect(refused.body.code).to.equal('RATE_LIMITED');
      // A chunked body of 150 KB, from a workspace whose bucket is full (a new one: buckets are
      // per workspace): charged as its chunks arrive. One passes within the burst...
      const ws2 = await newWorkspace(t.redis);
      expect((await chunked(t.service.baseUrl, '/data/set', ws2.apiKey, body('c1'))).status).to.equal(200);
      // ...the next, with the bucket in debt from the first and its answer, is refused.
      const cut = await chunked(t.service.baseUrl, '/data/set', ws2.apiKey, body('c2'));
      expect(cut.status).to.equal(429);
      const stored = async (workspaceId: string, userId: string) => (await t.redis.hkeys(keys.player(workspaceId, userId))).filter((f) => !f.startsWith('\0'));
      expect([await stored(ws.workspaceId, 'g1'), await stored(ws.workspaceId, 'g2'), await stored(ws2.workspaceId, 'c1'), await stored(ws2.workspaceId, 'c2')]).to.deep.equal([['g1'], [], ['c1'], []]);

      // Mid-stream, again from a full bucket (another new workspace): a gzip body decoding to 3
      // bursts (random text, so it stays large compressed) is cut off while it streams, the
      // socket closed rather than the rest read.
      const ws3 = await newWorkspace(t.redis);
      const huge = gzipSync(Buffer.from(JSON.stringify({ userId: 'g3', key: 'g3', value: randomBytes(3 * BURST).toString('base64').slice(0, 3 * BURST) })));
      const streamed = await chunked(t.service.baseUrl, '/data/set', ws3.apiKey, huge, { 'content-encoding': 'gzip' });
      expect(streamed.status).to.be.oneOf([413, 429]);
      expect(streamed.closed, `${streamed.status} ${JSON.stringify([...streamed.headers])}`).to.equal(true);
      expect(await t.redis.exists(keys.player(ws3.workspaceId, 'g3'))).to.equal(0);
    });

    it("charges a read of a player's versions by the data and history it reads, though the list it answers is small", async () => {
      const ws = await newWorkspace(t.redis);
      const api = client(t.service, ws.apiKey);
      expect((await client(setup.service, ws.apiKey).post('/data/set', { userId: 'v', key: 'k', value: VALUE })).status).to.equal(200);
      const list = await api.get('/data/versions?userId=v');
      expect(list.status, list.text).to.equal(200);
      expect(list.text.length, 'the list itself is small: never charged as an answer').to.be.below(LARGE_BYTES);
      const again = await api.get('/data/versions?userId=v');
      expect(again.status, again.text).to.equal(429);
      expect(again.body.error).to.match(/byte budget/);
      await budgetFull();
      const one = await api.get('/data/version?userId=v&version=1');
      expect(one.status, one.text).to.equal(200);
      expect(one.body.data.data.k.value).to.have.length(VALUE.length);
      expect((await api.get('/data/version?userId=v&version=1')).status).to.equal(429);
    });

    it('charges an acquire with load by the player it reads, and a delete of everything by what its script copies', async () => {
      const ws = await newWorkspace(t.redis);
      const api = client(t.service, ws.apiKey);
      const unlimited = client(setup.service, ws.apiKey);
      expect((await unlimited.post('/data/set', { userId: 'p', key: 'k', value: VALUE })).status).to.equal(200);
      expect((await unlimited.post('/data/set', { userId: 'r', key: 'k', value: VALUE })).status).to.equal(200);
      const first = await api.post('/sessions/acquire', { userId: 'p', owner: 'job-1', load: true, steal: true });
      expect(first.status, first.text).to.equal(200);
      expect(first.body.data.values.k).to.have.length(VALUE.length);
      const second = await api.post('/sessions/acquire', { userId: 'p', owner: 'job-2', load: true, steal: true });
      expect(second.status).to.equal(429);
      expect(second.body.error).to.match(/byte budget/);
      // The session was taken before the load was refused: the refusal says so and hands it.
      expect(second.body.error).to.match(/^Session ses_\w+ acquired, but the player was not loaded/);
      expect(second.body.data).to.include({ owner: 'job-2' });
      expect(second.body.data.sessionId).to.match(/^ses_/);
      expect(second.body.version).to.be.a('number');
      expect(second.headers.get('retry-after')).to.match(/^\d+$/);
      const held = await api.post('/data/set', { userId: 'p', key: 'small', value: 1, sessionId: second.body.data.sessionId });
      expect(held.status, 'the session handed in the refusal is the one held').to.equal(200);
      // The many-player form says the same for the player whose load was refused.
      await budgetFull();
      expect((await api.get('/data?userId=r')).status, 'a whole read leaves the bucket short of another').to.equal(200);
      const many = await api.post('/sessions/acquire', { players: ['r'], owner: 'job-3', load: true, steal: true });
      expect(many.status, many.text).to.equal(200);
      const [r] = many.body.data.players;
      expect(r).to.include({ userId: 'r', success: false, status: 429, code: 'RATE_LIMITED' });
      expect(r.error).to.match(/^Session ses_\w+ acquired, but the player was not loaded/);
      expect(r.data.sessionId).to.match(/^ses_/);

      // A small request whose script reads 150 KB inside Redis: paid after the fact, so the
      // workspace's next large body waits. (Another player: job-2's acquire holds p, its answer refused.)
      expect((await unlimited.post('/data/set', { userId: 'q', key: 'k', value: VALUE })).status).to.equal(200);
      await budgetFull();
      const deleted = await api.post('/data/delete', { userId: 'q' });
      expect(deleted.status, deleted.text).to.equal(200);
      expect((await api.post('/data/set', { userId: 'q', key: 'small', value: 1 })).status).to.equal(200);
      const waits = await api.post('/data/batch', { userId: 'q2', ops: [{ op: 'set', key: 'k', value: VALUE }] });
      expect(waits.status).to.equal(429);
    });
  });
});
