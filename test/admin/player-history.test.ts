// A player's history and restore, on a real Redis: the restore points listed after every kind of
// write (the service's clock moved one interval before each, so each write opens a point), each
// one rebuilt exactly as GET answered it then, paging, restore as a new version (to any retained
// version, 0 included), the rule for a player held by a game server's session, and the 404s for
// what is not retained.
import { expect } from 'chai';
import type { Redis } from 'ioredis';
import { AdminOperations, type CreatedWorkspace } from '../../src/admin/operations.js';
import { AppError } from '../../src/errors.js';
import { ADMIN_TOKEN, adminCall, testOps } from '../support/admin.js';
import { client, newWorkspace, testClock, testConfig, testRedis, useService } from '../support/service.js';

/** HISTORY_INTERVAL_SECONDS's default: a write after the clock moved this far opens a restore point. */
const INTERVAL_MS = 300_000;

async function failure(promise: Promise<unknown>): Promise<AppError> {
  const err = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(err, 'expected the operation to fail').to.be.instanceOf(AppError);
  return err as AppError;
}

/** The values of an export-shaped `data`, without the update times. */
const values = (data: Record<string, { value: unknown }>) => Object.fromEntries(Object.entries(data).map(([k, e]) => [k, e.value]));

describe('player history and restore (admin API)', function () {
  this.timeout(30_000);
  const clock = testClock();
  const h = useService({ ADMIN_TOKEN, HISTORY_MAX_VERSIONS: '50', HISTORY_MAX_AGE_HOURS: '168', HISTORY_MAX_BYTES: '1048576' }, { clock: clock.now });
  let ws: CreatedWorkspace;
  let api: ReturnType<typeof client>;
  before(async () => {
    ws = await newWorkspace(h.redis);
    const plain = client(h.service, ws.apiKey);
    // Every write in an interval of its own: each opens a restore point.
    api = {
      get: plain.get,
      post: (path, body, o) => {
        clock.advance(INTERVAL_MS);
        return plain.post(path, body, o);
      },
    };
  });
  const restore = (user: number, body: unknown) => {
    clock.advance(INTERVAL_MS);
    return adminCall(h.service, 'POST', `${base(user)}/restore`, { body });
  };
  const base = (user: string | number) => `/workspaces/${ws.workspaceId}/players/${user}`;

  /** What GET /data answered after each write, by version (values only; {} for no data). */
  async function seen(user: number, into: Record<number, Record<string, unknown>>): Promise<void> {
    const res = await api.get(`/data?userId=${user}`);
    into[res.body.version as number] = res.status === 404 ? {} : (res.body.data as Record<string, unknown>);
  }

  it('lists every kind of write, and rebuilds each retained version as GET answered it then', async () => {
    const user = 101;
    const answered: Record<number, Record<string, unknown>> = { 0: {} };
    const writes: Array<[string, unknown]> = [
      ['/data/set', { userId: user, key: 'coins', value: 10 }],
      ['/data/set', { userId: user, key: 'inv', value: ['sword', { gold: 3 }] }],
      ['/data/increment', { userId: user, key: 'coins', amount: 5 }],
      ['/data/set', { userId: user, key: 'name', value: 'Ünïcødé €' }],
      ['/data/delete', { userId: user, key: 'inv' }],
      ['/data/batch', { userId: user, ops: [{ op: 'set', key: 'a', value: { x: 1 } }, { op: 'increment', key: 'coins', amount: -3 }, { op: 'delete', key: 'name' }] }],
      ['/data/delete', { userId: user }],
      ['/data/set', { userId: user, key: 'fresh', value: true }],
    ];
    for (const [path, body] of writes) {
      const res = await api.post(path, body);
      expect(res.status, res.text).to.equal(200);
      await seen(user, answered);
    }
    expect(Object.keys(answered).map(Number).sort((a, b) => a - b)).to.deep.equal([0, 1, 2, 3, 4, 5, 6, 7, 8]);

    const history = await adminCall(h.service, 'GET', `${base(user)}/history`);
    expect(history.status, history.text).to.equal(200);
    const page = history.body.data;
    expect(page.version).to.equal(8);
    expect(page.nextBefore).to.equal(null);
    expect(page.versions.map((v: { version: number }) => v.version)).to.deep.equal([8, 7, 6, 5, 4, 3, 2, 1, 0]);
    // The current version first; each restore point names the write that followed it.
    expect(page.versions[0]).to.deep.equal({ version: 8, time: null, kind: null, by: null, keys: null });
    expect(page.versions.map((v: { kind: string }) => v.kind)).to.deep.equal([null, 'set', 'delete', 'batch', 'delete', 'set', 'increment', 'set', 'set']);
    expect(page.versions[1]).to.include({ by: `key:${ws.keyId}` });
    expect(page.versions[1].time).to.match(/^\d{4}-\d\d-\d\dT/);
    expect(page.versions[3].keys).to.have.members(['a', 'coins', 'name']);
    expect(page.versions[2].keys).to.have.members(['coins', 'a']);
    // The player's first write shows too, with its time and writer: version 0 is the point before it.
    expect(page.versions[8]).to.deep.include({ version: 0, kind: 'set', by: `key:${ws.keyId}`, keys: ['coins'] });

    for (let v = 0; v <= 8; v++) {
      const at = await adminCall(h.service, 'GET', `${base(user)}/history/${v}`);
      expect(at.status, at.text).to.equal(200);
      expect(at.body.data).to.include({ version: v, currentVersion: 8, userId: String(user), workspaceId: ws.workspaceId });
      expect(values(at.body.data.data), `version ${v}`).to.deep.equal(answered[v]);
    }
    // The update times are those of then, too.
    const coinsThen = await adminCall(h.service, 'GET', `${base(user)}/history/3`);
    const coinsNow = (await api.get(`/data?userId=${user}&key=fresh`)).body.data.updated_at;
    expect(coinsThen.body.data.data.coins.updated_at < coinsNow).to.equal(true);

    const audit = await adminCall(h.service, 'GET', `/audit?workspace=${ws.workspaceId}&limit=5`);
    expect(audit.body.data[0]).to.include({ action: 'player.version', target: `player:${ws.workspaceId}/${user}` });
  });

  it('pages with limit and before, and refuses bad paging with 400', async () => {
    const user = 102;
    for (let i = 0; i < 7; i++) expect((await api.post('/data/set', { userId: user, key: 'k', value: i })).status).to.equal(200);
    const all: number[] = [];
    let before: number | null | undefined;
    let pages = 0;
    do {
      const res = await adminCall(h.service, 'GET', `${base(user)}/history?limit=3${before === undefined ? '' : `&before=${before}`}`);
      expect(res.status, res.text).to.equal(200);
      expect(res.body.data.versions.length).to.be.at.most(3);
      all.push(...res.body.data.versions.map((v: { version: number }) => v.version));
      before = res.body.data.nextBefore;
      pages += 1;
    } while (before !== null && pages < 10);
    expect(all).to.deep.equal([7, 6, 5, 4, 3, 2, 1, 0]);
    expect(pages).to.equal(3);
    for (const query of ['limit=0', 'limit=101', 'limit=x', 'before=-1', 'before=x', 'other=1']) {
      const res = await adminCall(h.service, 'GET', `${base(user)}/history?${query}`);
      expect(res.status, query).to.equal(query === 'other=1' ? 200 : 400);
      if (res.status === 400) expect(res.body.code).to.equal('INVALID_REQUEST');
    }
  });

  it('restores a version as a new one, can undo the restore, and restores version 0 as an empty player', async () => {
    const user = 103;
    const answered: Record<number, Record<string, unknown>> = { 0: {} };
    await api.post('/data/set', { userId: user, key: 'coins', value: 100 });
    await seen(user, answered);
    await api.post('/data/set', { userId: user, key: 'level', value: 7 });
    await seen(user, answered);
    // The bad save: coins wiped, a key added.
    await api.post('/data/batch', { userId: user, ops: [{ op: 'set', key: 'coins', value: 0 }, { op: 'set', key: 'hacked', value: true }] });
    await seen(user, answered);

    const restored = await restore(user, { version: 2 });
    expect(restored.status, restored.text).to.equal(200);
    expect(restored.body.data).to.deep.equal({ userId: String(user), restoredFrom: 2, version: 4, set: 1, deleted: 1, endedSession: null });
    const now = await api.get(`/data?userId=${user}`);
    expect(now.body).to.deep.include({ version: 4, data: answered[2] });

    const history = (await adminCall(h.service, 'GET', `${base(user)}/history?limit=2`)).body.data;
    expect(history.versions[0]).to.include({ version: 4, kind: null });
    expect(history.versions[1]).to.include({ version: 3, kind: 'restore', by: 'admin:admin-api' });
    expect(history.versions[1].keys).to.have.members(['coins', 'hacked']);
    const audit = await adminCall(h.service, 'GET', `/audit?workspace=${ws.workspaceId}&limit=1`);
    expect(audit.body.data[0]).to.include({ action: 'player.restore', target: `player:${ws.workspaceId}/${user}` });
    expect(audit.body.data[0].details).to.include({ from: 2, version: 4, force: false });

    // A restore is itself undone by restoring the version before it.
    const undone = await restore(user, { version: 3 });
    expect(undone.body.data.version).to.equal(5);
    expect((await api.get(`/data?userId=${user}`)).body.data).to.deep.equal(answered[3]);

    // Restoring the version the player already has still makes a version of its own.
    const same = await restore(user, { version: 5 });
    expect(same.body.data).to.include({ version: 6, set: 3, deleted: 0 });
    expect((await api.get(`/data?userId=${user}`)).body.data).to.deep.equal(answered[3]);

    const empty = await restore(user, { version: 0 });
    expect(empty.body.data).to.include({ version: 7, set: 0, deleted: 3 });
    const gone = await api.get(`/data?userId=${user}`);
    expect(gone.status).to.equal(404);
    expect(gone.body).to.include({ code: 'PLAYER_NOT_FOUND', version: 7 });
    // ... and back.
    expect((await restore(user, { version: 2 })).body.data.version).to.equal(8);
    expect((await api.get(`/data?userId=${user}`)).body.data).to.deep.equal(answered[2]);
  });

  it("refuses a restore while a game server holds the player; force ends the session, and the server's next write is SESSION_LOST", async () => {
    const user = 104;
    await api.post('/data/set', { userId: user, key: 'coins', value: 50 });
    const acquired = await api.post('/sessions/acquire', { userId: user, owner: 'job-eu-7' });
    expect(acquired.status, acquired.text).to.equal(200);
    const sessionId = acquired.body.data.sessionId as string;
    await api.post('/data/set', { userId: user, key: 'coins', value: 1, sessionId });

    const refused = await restore(user, { version: 1 });
    expect(refused.status).to.equal(409);
    expect(refused.body).to.include({ code: 'SESSION_LOCKED', version: 2 });
    expect(refused.body.data.owner).to.equal('job-eu-7');
    expect(refused.body.error).to.match(/job-eu-7.*force/);
    expect((await api.get(`/data?userId=${user}`)).body.data).to.deep.equal({ coins: 1 });

    const forced = await restore(user, { version: 1, force: true });
    expect(forced.status, forced.text).to.equal(200);
    expect(forced.body.data).to.deep.include({ version: 3, endedSession: { sessionId, owner: 'job-eu-7' } });

    // The game server still has coins=1 in memory: its save is refused, not written over the restore.
    const late = await api.post('/data/set', { userId: user, key: 'coins', value: 1, sessionId });
    expect(late.status).to.equal(409);
    expect(late.body.code).to.equal('SESSION_LOST');
    expect((await api.get(`/data?userId=${user}`)).body).to.deep.include({ version: 3, data: { coins: 50 } });
    const audit = await adminCall(h.service, 'GET', `/audit?workspace=${ws.workspaceId}&limit=1`);
    expect(audit.body.data[0].details).to.include({ force: true, endedSession: 'job-eu-7' });
  });

  it('answers 404 for what is not retained or does not exist, and 400 for bad input', async () => {
    const user = 105;
    await api.post('/data/set', { userId: user, key: 'k', value: 1 });
    const cases: Array<[string, string, unknown, number, string]> = [
      ['GET', `${base(user)}/history/2`, undefined, 404, 'VERSION_NOT_RETAINED'],
      ['POST', `${base(user)}/restore`, { version: 9 }, 404, 'VERSION_NOT_RETAINED'],
      ['GET', `${base(999)}/history`, undefined, 404, 'PLAYER_NOT_FOUND'],
      ['GET', `${base(999)}/history/0`, undefined, 404, 'PLAYER_NOT_FOUND'],
      ['POST', `${base(999)}/restore`, { version: 0 }, 404, 'PLAYER_NOT_FOUND'],
      ['GET', `/workspaces/ws_nope/players/1/history`, undefined, 404, 'NOT_FOUND'],
      ['GET', `${base(user)}/history/abc`, undefined, 400, 'INVALID_REQUEST'],
      ['GET', `${base('bad{id}')}/history`, undefined, 400, 'INVALID_REQUEST'],
      ['POST', `${base(user)}/restore`, {}, 400, 'INVALID_REQUEST'],
      ['POST', `${base(user)}/restore`, { version: -1 }, 400, 'INVALID_REQUEST'],
      ['POST', `${base(user)}/restore`, { version: '1' }, 400, 'INVALID_REQUEST'],
      ['POST', `${base(user)}/restore`, { version: 1.5 }, 400, 'INVALID_REQUEST'],
      ['POST', `${base(user)}/restore`, { version: 1, force: 'yes' }, 400, 'INVALID_REQUEST'],
      ['POST', `${base(user)}/restore`, { version: 1, extra: 1 }, 400, 'INVALID_REQUEST'],
    ];
    for (const [method, path, body, status, code] of cases) {
      const res = await adminCall(h.service, method, path, body === undefined ? {} : { body });
      expect(res.status, `${method} ${path} ${JSON.stringify(body)}: ${res.text}`).to.equal(status);
      expect(res.body.code, `${method} ${path}`).to.equal(code);
    }
    expect((await adminCall(h.service, 'POST', `${base(user)}/restore`, { body: { version: 1 }, token: null })).status).to.equal(401);
  });
});

describe('player history and restore (AdminOperations)', () => {
  let redis: Redis;
  before(() => {
    redis = testRedis();
  });
  after(() => redis.disconnect());
  // Each reading of this clock is one interval later: every write opens a restore point.
  const opsWith = (env: Record<string, string>) => {
    let at = Date.now();
    return testOps(redis, { config: testConfig(env), clock: () => (at += INTERVAL_MS) });
  };

  it('keeps the last HISTORY_MAX_VERSIONS versions: an older one is 404 VERSION_NOT_RETAINED, the retained ones restore', async () => {
    const ops = opsWith({ HISTORY_MAX_VERSIONS: '3' });
    const { workspaceId } = await newWorkspace(redis);
    for (let i = 1; i <= 6; i++) await ops.setPlayerValue(workspaceId, 7, `k${i % 2}`, i);
    const history = await ops.playerHistory(workspaceId, 7);
    // The current version and three restore points (5, 4, 3).
    expect(history.versions.map((v) => v.version)).to.deep.equal([6, 5, 4, 3]);
    expect(history.versions[1]).to.include({ kind: 'admin-set', by: 'admin:test' });
    for (const v of [0, 1, 2]) {
      expect((await failure(ops.playerAtVersion(workspaceId, 7, v))).code).to.equal('VERSION_NOT_RETAINED');
      const refused = await failure(ops.restorePlayer(workspaceId, 7, v));
      expect(refused.code).to.equal('VERSION_NOT_RETAINED');
      expect(refused.status).to.equal(404);
    }
    expect(values((await ops.playerAtVersion(workspaceId, 7, 3)).data)).to.deep.equal({ k0: 2, k1: 3 });
    const restored = await ops.restorePlayer(workspaceId, 7, 3);
    expect(restored).to.include({ version: 7, set: 2, deleted: 0 });
    expect(values((await ops.exportPlayer(workspaceId, 7)).data)).to.deep.equal({ k0: 2, k1: 3 });
    expect((await failure(ops.restorePlayer(workspaceId, 7, 'x'))).status).to.equal(400);
    expect((await failure(ops.playerHistory(workspaceId, 7, { limit: 101 }))).status).to.equal(400);
  });

  it('with history off, only the current version is listed, and restoring it rewrites the same data', async () => {
    const ops = opsWith({ HISTORY_MAX_VERSIONS: '0' });
    const { workspaceId } = await newWorkspace(redis);
    await ops.setPlayerValue(workspaceId, 'p', 'a', 1);
    await ops.setPlayerValue(workspaceId, 'p', 'a', 2);
    const history = await ops.playerHistory(workspaceId, 'p');
    expect(history.versions).to.deep.equal([{ version: 2, time: null, kind: null, by: null, keys: null }]);
    expect((await failure(ops.playerAtVersion(workspaceId, 'p', 1))).code).to.equal('VERSION_NOT_RETAINED');
  });

  it('restores while a game server writes: the conditional write is retried on VERSION_CONFLICT', async () => {
    const ops = opsWith({ HISTORY_MAX_VERSIONS: '50' });
    const { workspaceId } = await newWorkspace(redis);
    await ops.setPlayerValue(workspaceId, 'r', 'a', 1);
    await ops.setPlayerValue(workspaceId, 'r', 'a', 2);
    // A writer that bumps the player between the restore's read and its write, a few times.
    let stop = false;
    const writer = (async () => {
      let n = 0;
      while (!stop && n < 20) {
        await ops.setPlayerValue(workspaceId, 'r', 'b', n++);
      }
    })();
    const outcomes = await Promise.allSettled([1, 2, 3, 4, 5].map(() => ops.restorePlayer(workspaceId, 'r', 1)));
    stop = true;
    await writer;
    for (const o of outcomes) {
      // Either restored, or refused after three attempts with VERSION_CONFLICT: never another error.
      if (o.status === 'rejected') expect((o.reason as AppError).code).to.equal('VERSION_CONFLICT');
    }
    expect(outcomes.some((o) => o.status === 'fulfilled')).to.equal(true);
    const last = await ops.restorePlayer(workspaceId, 'r', 1);
    expect(values((await ops.exportPlayer(workspaceId, 'r')).data)).to.deep.equal({ a: 1 });
    expect(last.deleted).to.equal(1);
  });
});

describe('an operator restore and the storage quota', () => {
  let redis: Redis;
  before(() => {
    redis = testRedis();
  });
  after(() => redis.disconnect());

  it('restores within the quota, and refuses 403 STORAGE_QUOTA_EXCEEDED (nothing written, no session ended) past it', async () => {
    let at = Date.now() - 3_600_000;
    const config = testConfig({ STORAGE_QUOTA_FREE_BYTES: '20000', HISTORY_MAX_VERSIONS: '50' });
    const ops = new AdminOperations(redis, { actor: 'test', config, clock: () => (at += INTERVAL_MS) });
    const { workspaceId: ws } = await ops.createWorkspace({ name: 'restore quota', plan: 'free' });
    await ops.setPlayerValue(ws, 'big', 'save', 'x'.repeat(15_000));
    await ops.setPlayerValue(ws, 'big', 'save', 'small');
    await ops.setPlayerValue(ws, 'other', 'save', 'y'.repeat(12_000));
    await ops.players.session(ws, 'big', { action: 'acquire', sessionId: 'ses_quota_restore', owner: 'job-q', ttlMs: 60_000 });
    // Version 1 held 15 KB: back to it, the workspace's data would pass 20,000 B.
    const refused = await ops.restorePlayer(ws, 'big', 1, { force: true }).then(() => undefined, (err: unknown) => err);
    expect(refused).to.be.instanceOf(AppError);
    expect((refused as AppError).code).to.equal('STORAGE_QUOTA_EXCEEDED');
    expect((await ops.playerHistory(ws, 'big')).version).to.equal(2);
    expect((await ops.players.sessionOf(ws, 'big')).session?.owner, 'the session was not ended for nothing').to.equal('job-q');
    // With room again, the same restore goes through.
    await ops.deletePlayerData(ws, 'other');
    const restored = await ops.restorePlayer(ws, 'big', 1, { force: true });
    expect(restored).to.deep.include({ restoredFrom: 1, version: 3 });
  });
});
