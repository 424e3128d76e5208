// Moving a live game over from the platform's own data stores (the session store's `migrate`
// option, docs/migration.md), run as shipped in Luau VMs against the real service, with the
// DataStoreService stand-in (luau/datastore.luau, backend in luau-datastore.ts) shared by the VMs
// as a game's servers share its data stores. Each VM is one server on its own virtual clock.
import { expect } from 'chai';
import { readFileSync } from 'node:fs';
import { Redis } from 'ioredis';
import type { CreatedWorkspace } from '../../src/admin/operations.js';
import { loadConfig } from '../../src/config.js';
import { createLogger } from '../../src/logger.js';
import { startService, type RunningService } from '../../src/server.js';
import { startCluster, type TestCluster } from '../support/cluster.js';
import { call, newWorkspace, useService } from '../support/service.js';
import { GET_THROTTLED, INTERNAL_ERROR, MAX_VALUE_BYTES, platformDataStores as old } from './luau-datastore.js';
import { startLuauVm, type LuauVm, type RecordedRequest } from './luau-vm.js';

// A server: init, a session store whose migrate option is the global MIGRATE, and globals the
// tests read. OPEN opens in its own thread, as a PlayerAdded handler would.
const SERVER = `
local baseUrl, apiKey, options = ...
PlayerData.init({ baseUrl = baseUrl, apiKey = apiKey })
local o = JSON.decode(options)
o.migrate = MIGRATE
STORE = PlayerData.newSessionStore(o)
LOST, MIGRATED, MIGRATION_FAILED = {}, {}, {}
STORE.SessionLost:Connect(function(session, code) table.insert(LOST, session.userId .. ":" .. code) end)
STORE.Migrated:Connect(function(userId, marker) table.insert(MIGRATED, userId) end)
STORE.MigrationFailed:Connect(function(userId, message) table.insert(MIGRATION_FAILED, message) end)
OPENED = {}
function OPEN(id)
  task.spawn(function()
    local ok, session = pcall(STORE.open, STORE, id)
    OPENED[id] = if ok then (session or false) else tostring(session)
  end)
end`;

// The game's old save: one key per player in the store "PlayerData".
const ONE_KEY = `MIGRATE = {
  from = function(userId) return { store = "PlayerData", key = "Player_" .. userId } end,
  map = function(old, userId)
    if old == nil then return {} end
    return { coins = old.Coins, level = old.Level, inventory = old.Inventory }
  end,
}`;

// A game that kept pets in a second store: both keys must be read before anything is written.
const TWO_KEYS = `MIGRATE = {
  from = function(userId)
    return { { store = "PlayerData", key = "Player_" .. userId }, { store = "Pets", key = userId, scope = "v2" } }
  end,
  map = function(old, userId)
    local main, pets = old[1] or {}, old[2] or {}
    return { coins = main.Coins or 0, pets = pets }
  end,
}`;

const bodyOf = (r: RecordedRequest) => JSON.parse(r.body!);
const batchesOf = (vm: LuauVm, from = 0) => vm.requests.slice(from).filter((r) => r.url.endsWith('/data/batch'));
/** The migration batches: the only batches that carry ifVersion. */
const migrationsOf = (vm: LuauVm) => batchesOf(vm).filter((r) => bodyOf(r).ifVersion !== undefined);
const acquiresOf = (vm: LuauVm) => vm.requests.filter((r) => r.url.endsWith('/sessions/acquire'));
const releasesOf = (vm: LuauVm) => vm.requests.filter((r) => r.url.endsWith('/sessions/release'));
const OLD_PLAYER = { Coins: 120, Level: 7, Inventory: ['sword', 'shield'] };

describe('Luau migration from the platform data store (in Luau VMs, against the service)', () => {
  const t = useService();
  let ws: CreatedWorkspace;
  let a: LuauVm;
  let b: LuauVm;
  before(async () => {
    a = await startLuauVm(0);
    b = await startLuauVm(1);
  });
  beforeEach(async () => {
    ws = await newWorkspace(t.redis);
    old.reset();
    await a.reset();
    await b.reset();
  });

  const start = async (vm: LuauVm, migrate = ONE_KEY, options: Record<string, unknown> = {}) => {
    await vm.run(migrate);
    await vm.run(SERVER, t.service.baseUrl, ws.apiKey, JSON.stringify({ autoSaveSeconds: 60, ...options }));
  };
  const stored = async (userId: number) => {
    const res = await call(t.service, 'GET', `/data?userId=${userId}`, { key: ws.apiKey });
    return { status: res.status, version: res.body.version as number, data: res.status === 404 ? undefined : res.body.data };
  };

  it('moves a player with data over in ONE batch with the marker, at ifVersion 0 under the session, and plays on from the service', async () => {
    old.seed('PlayerData', 'Player_1', OLD_PLAYER);
    const oldVersion = old.version('PlayerData', 'Player_1');
    await start(a, ONE_KEY, { template: { coins: 0, level: 1, tutorialDone: false } });
    const [coins, inventory, tutorial, version, markerJson] = await a.run(`
      local s = STORE:open(1)
      return s.data.coins, JSON.encode(s.data.inventory), s.data.tutorialDone, s.version, JSON.encode(s.data.migratedFrom)`);
    expect([coins, inventory, tutorial, version]).to.deep.equal([120, '["sword","shield"]', false, 1]);

    // One read of the old key, past the server's cache; one batch after the acquire.
    expect(old.calls).to.deep.equal([{ op: 'GetAsync', store: 'PlayerData', scope: 'global', key: 'Player_1', useCache: false, cached: false }]);
    expect(a.requests.map((r) => r.url.replace(t.service.baseUrl, ''))).to.deep.equal(['/ping', '/sessions/acquire', '/data/batch']);
    const batch = bodyOf(migrationsOf(a)[0]!);
    expect(batch.ifVersion).to.equal(0);
    expect(batch.sessionId).to.match(/^ses_/);
    expect(batch.sessionId).to.equal(bodyOf(a.requests[2]!).sessionId);
    expect(batch.ops.map((op: { key: string }) => op.key)).to.deep.equal(['coins', 'inventory', 'level', 'migratedFrom']);
    expect(a.requests[2]!.headers['Idempotency-Key']).to.be.a('string');

    const marker = JSON.parse(markerJson as string);
    expect(marker.sources).to.deep.equal([{ store: 'PlayerData', key: 'Player_1', found: true, version: oldVersion }]);
    expect(marker.at).to.match(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/);
    expect(Math.abs(Date.parse(marker.at) - Date.now())).to.be.lessThan(60_000);
    const service = await stored(1);
    expect(service.version).to.equal(1);
    expect(service.data).to.deep.equal({ coins: 120, level: 7, inventory: ['sword', 'shield'], migratedFrom: marker });
    expect(await a.run('return MIGRATED[1], #MIGRATION_FAILED, #WARNINGS, #ERRORS')).to.deep.equal(['1', 0, 0, 0]);

    // From here on the service is the store: play, close (one request), reopen elsewhere.
    await a.run('local s = STORE:find(1) s.data.coins += 5 s:close()');
    await start(b);
    const [coinsOnB, tutorialOnB] = await b.run('local s = STORE:open(1) return s.data.coins, s.data.tutorialDone');
    expect([coinsOnB, tutorialOnB]).to.deep.equal([125, false]);
    expect(old.reads('PlayerData', 'Player_1'), 'the old key is never read again').to.equal(1);
    expect(migrationsOf(b)).to.have.length(0);
    expect(old.peek('PlayerData', 'Player_1'), 'the old store is left as it was').to.deep.equal(OLD_PLAYER);
  });

  it('a missing old key (GetAsync returns nil) moves over as an empty player with the marker', async () => {
    await start(a, ONE_KEY, { template: { coins: 0 } });
    const [coins, found] = await a.run('local s = STORE:open(2) return s.data.coins, s.data.migratedFrom.sources[1].found');
    expect([coins, found]).to.deep.equal([0, false]);
    const service = await stored(2);
    expect(Object.keys(service.data)).to.deep.equal(['migratedFrom']);
    expect(service.data.migratedFrom.sources).to.deep.equal([{ store: 'PlayerData', key: 'Player_2', found: false }]);
    expect(service.version).to.equal(1);

    // The empty player is marked: a later open reads nothing from the old store, even once the
    // old store has a value for them (an old server saved late).
    await a.run('STORE:find(2):close()');
    old.seed('PlayerData', 'Player_2', OLD_PLAYER);
    const [coinsAgain] = await a.run('return STORE:open(2).data.coins');
    expect(coinsAgain).to.equal(0);
    expect(old.reads('PlayerData', 'Player_2')).to.equal(1);
  });

  it('a player already on the service is never read from the old store: marked, with data but no marker, or with every key deleted', async () => {
    old.seed('PlayerData', 'Player_3', OLD_PLAYER);
    old.seed('PlayerData', 'Player_4', OLD_PLAYER);
    old.seed('PlayerData', 'Player_5', OLD_PLAYER);
    // 4 has data written before the migration was turned on; 5 had data, all deleted since.
    await call(t.service, 'POST', '/data/set', { key: ws.apiKey, body: { userId: 4, key: 'coins', value: 9 } });
    await call(t.service, 'POST', '/data/set', { key: ws.apiKey, body: { userId: 5, key: 'coins', value: 9 } });
    await call(t.service, 'POST', '/data/delete', { key: ws.apiKey, body: { userId: 5 } });
    await start(a);
    await start(b);
    await a.run('STORE:open(3):close()');
    expect(old.reads('PlayerData', 'Player_3')).to.equal(1);

    // Joins and rejoins on both servers, with time passing (the stand-in's 4 s cache long gone).
    for (let round = 0; round < 3; round++) {
      for (const vm of [a, b]) {
        await vm.run('for _, id in { 3, 4, 5 } do STORE:open(id):close() end task.wait(10)');
      }
    }
    expect(old.reads('PlayerData', 'Player_3')).to.equal(1);
    expect(old.reads('PlayerData', 'Player_4')).to.equal(0);
    expect(old.reads('PlayerData', 'Player_5')).to.equal(0);
    expect(old.calls).to.have.length(1);
    expect((await stored(4)).data).to.deep.equal({ coins: 9 });
    expect((await stored(5)).status).to.equal(404);
    expect(migrationsOf(a).length + migrationsOf(b).length).to.equal(1);
  });

  it('two servers load the same player at once: one migrates under the lock, the other waits and gets the same data; one migration in all', async () => {
    old.seed('PlayerData', 'Player_6', OLD_PLAYER);
    old.faults.push({ op: 'GetAsync', delaySeconds: 3 }); // A is mid-migration when B asks
    await start(a);
    await start(b);
    await a.run('OPEN(6)');
    await b.run('OPEN(6)');
    expect(await a.run('return OPENED[6] == nil')).to.deep.equal([true]);
    expect(await b.run('return OPENED[6] == nil')).to.deep.equal([true]);
    await a.run('task.wait(5)');
    const [coinsA] = await a.run('return OPENED[6].data.coins');
    expect(coinsA).to.equal(120);

    // B took the lock only by stealing it (after 30 s), and loaded what A wrote.
    await b.run('task.wait(40)');
    const [coinsB, markerB] = await b.run('return OPENED[6].data.coins, JSON.encode(OPENED[6].data.migratedFrom)');
    const [markerA] = await a.run('return JSON.encode(OPENED[6].data.migratedFrom)');
    expect(coinsB).to.equal(120);
    expect(JSON.parse(markerB as string)).to.deep.equal(JSON.parse(markerA as string));
    expect(acquiresOf(b).length).to.be.at.least(2);
    expect(old.calls.filter((c) => c.op === 'GetAsync')).to.have.length(1);
    expect(migrationsOf(a)).to.have.length(1);
    expect(migrationsOf(b)).to.have.length(0);
    expect(await b.run('return #MIGRATED, #MIGRATION_FAILED')).to.deep.equal([0, 0]);
    expect((await stored(6)).version).to.equal(1);
  });

  it('a server stalled in GetAsync past the steal: the other server migrates, the stalled one\'s batch is fenced off (SESSION_LOST), nothing is written twice', async () => {
    old.seed('PlayerData', 'Player_7', { Coins: 1 });
    old.faults.push({ op: 'GetAsync', delaySeconds: 60 });
    await start(a);
    await start(b);
    // Its acquire leaves at the end of the join window (joinBatchSeconds); it reads { Coins = 1 }, then hangs for 60 s.
    await a.run('OPEN(7) task.wait(1)');
    old.seed('PlayerData', 'Player_7', { Coins: 2 }); // an old server saved late
    await b.run('OPEN(7) task.wait(40)'); // steals after 30 s, migrates { Coins = 2 }
    expect(await b.run('return OPENED[7].data.coins')).to.deep.equal([2]);

    await a.run('task.wait(70)');
    const [opened] = await a.run('return OPENED[7]');
    expect(opened).to.match(/^PlayerData\.migrate: SESSION_LOST: player 7: HTTP 409: /);
    expect(await a.run('return #MIGRATION_FAILED, STORE:find(7) == nil')).to.deep.equal([1, true]);
    expect(releasesOf(a), 'no release for a lock that is not ours').to.have.length(0);
    expect(migrationsOf(a)).to.have.length(1);
    expect(migrationsOf(b)).to.have.length(1);
    const service = await stored(7);
    expect(service.version).to.equal(1);
    expect(service.data.coins).to.equal(2);
    // B plays on undisturbed.
    await b.run('OPENED[7].data.coins += 1 OPENED[7]:save()');
    expect((await stored(7)).data.coins).to.equal(3);
  });

  it('a failing old store is retried with backoff, and the player moves over once it answers', async () => {
    old.seed('PlayerData', 'Player_8', OLD_PLAYER);
    old.faults.push({ op: 'GetAsync', error: INTERNAL_ERROR }, { op: 'GetAsync', error: GET_THROTTLED });
    await start(a);
    const [coins, before] = await a.run('local before = os.clock() return STORE:open(8).data.coins, before');
    const [after] = await a.run('return os.clock()');
    expect(coins).to.equal(120);
    expect(old.calls.map((c) => c.error ?? 'ok')).to.deep.equal([INTERNAL_ERROR, GET_THROTTLED, 'ok']);
    // Backoff 0.5 s then 1 s, each between half and all of that.
    expect((after as number) - (before as number)).to.be.within(0.75, 2.0); // the backoff (about 1 s) plus the VM's own time: 1.63 s once on a loaded machine
    expect(migrationsOf(a)).to.have.length(1);
    expect(await a.run('return #MIGRATION_FAILED')).to.deep.equal([0]);
  });

  it('an old store that keeps failing: open raises OLD_STORE_FAILED after 5 tries, nothing is written, the lock is given back; the next join migrates', async () => {
    old.seed('PlayerData', 'Player_9', OLD_PLAYER);
    for (let i = 0; i < 5; i++) old.faults.push({ op: 'GetAsync', error: INTERNAL_ERROR });
    await start(a);
    await start(b);
    const [err] = await a.run('return select(2, pcall(STORE.open, STORE, 9))');
    expect(err).to.equal(
      `PlayerData.migrate: OLD_STORE_FAILED: player 9: GetAsync of PlayerData/Player_9 failed 5 time(s), last: ${INTERNAL_ERROR}`,
    );
    expect(await a.run('return PlayerData.errorCode(...)', err as string)).to.deep.equal(['OLD_STORE_FAILED']);
    expect(old.reads('PlayerData', 'Player_9')).to.equal(5);
    expect(batchesOf(a)).to.have.length(0);
    expect(releasesOf(a)).to.have.length(1);
    expect(await a.run('return MIGRATION_FAILED[1] == ..., STORE:find(9) == nil', err as string)).to.deep.equal([true, true]);
    expect((await stored(9)).status).to.equal(404);

    // Released: another server opens at once (no wait, no steal) and moves the player over.
    const [coins] = await b.run('return STORE:open(9).data.coins');
    expect(coins).to.equal(120);
    expect(acquiresOf(b)).to.have.length(1);
    expect(acquiresOf(b).map(bodyOf)[0].steal).to.equal(undefined);
  });

  it('an old store error that cannot pass on a retry (4xx: no access) fails at once', async () => {
    old.faults.push({ op: 'GetAsync', error: '403: Cannot write to DataStore from studio if API access is not enabled.' });
    await start(a);
    const [err] = await a.run('return select(2, pcall(STORE.open, STORE, 10))');
    expect(err).to.match(/^PlayerData\.migrate: OLD_STORE_FAILED: player 10: GetAsync of PlayerData\/Player_10 failed 1 time\(s\), last: 403: /);
    expect(old.calls).to.have.length(1);
  });

  it('a failure half-way (the second old key fails): nothing is written, the player is not marked; a later load migrates both keys', async () => {
    old.seed('PlayerData', 'Player_11', { Coins: 50 });
    old.seed('Pets', '11', { dog: 2, cat: 1 }, 'v2');
    for (let i = 0; i < 5; i++) old.faults.push({ op: 'GetAsync', store: 'Pets', error: INTERNAL_ERROR });
    await start(a, TWO_KEYS);
    const [err] = await a.run('return select(2, pcall(STORE.open, STORE, 11))');
    expect(err).to.match(/^PlayerData\.migrate: OLD_STORE_FAILED: player 11: GetAsync of Pets\/11 failed 5 time\(s\)/);
    expect(old.calls.map((c) => `${c.store}:${c.error === undefined ? 'ok' : 'failed'}`)).to.deep.equal([
      'PlayerData:ok',
      'Pets:failed',
      'Pets:failed',
      'Pets:failed',
      'Pets:failed',
      'Pets:failed',
    ]);
    expect(batchesOf(a), 'not a byte written').to.have.length(0);
    const half = await stored(11);
    expect([half.status, half.version]).to.deep.equal([404, 0]);

    const [coins, dogs, sources] = await a.run(`
      local s = STORE:open(11)
      return s.data.coins, s.data.pets.dog, JSON.encode(s.data.migratedFrom.sources)`);
    expect([coins, dogs]).to.deep.equal([50, 2]);
    expect(JSON.parse(sources as string).map((s: { store: string; scope?: string; found: boolean }) => [s.store, s.scope, s.found])).to.deep.equal([
      ['PlayerData', undefined, true],
      ['Pets', 'v2', true],
    ]);
    const whole = await stored(11);
    expect(whole.version).to.equal(1);
    expect(whole.data.pets).to.deep.equal({ dog: 2, cat: 1 });
    expect(migrationsOf(a)).to.have.length(1);
  });

  it('a map that raises or returns what cannot be stored fails the load with MIGRATION_INVALID before any write', async () => {
    old.seed('PlayerData', 'Player_12', { Coins: 1 });
    await a.run(`MIGRATE = {
      from = function(userId) return { store = "PlayerData", key = "Player_" .. userId } end,
      map = function(old) if MODE == "raise" then error("no Coins field") end return { speed = 0/0 } end,
    }`);
    await a.run(SERVER, t.service.baseUrl, ws.apiKey, '{}');
    const [raised] = await a.run('MODE = "raise" return select(2, pcall(STORE.open, STORE, 12))');
    expect(raised).to.match(/^PlayerData\.migrate: MIGRATION_INVALID: player 12: migrate\.map raised: .*no Coins field/);
    const [nan] = await a.run('MODE = "nan" return select(2, pcall(STORE.open, STORE, 12))');
    expect((nan as string).replace('-nan', 'nan')).to.equal(
      'PlayerData.migrate: MIGRATION_INVALID: player 12: data.speed is nan: NaN and infinite numbers cannot be stored',
    );
    expect(batchesOf(a)).to.have.length(0);
    expect((await stored(12)).status).to.equal(404);
  });

  it('the default map takes the old table\'s keys as they are; a too-big player is refused before sending', async () => {
    old.seed('PlayerData', 'Player_13', { coins: 3, quests: { q1: true } });
    old.seed('PlayerData', 'Player_14', { blob: 'x'.repeat(40 * 1024) });
    await a.run('MIGRATE = { from = function(userId) return { store = "PlayerData", key = "Player_" .. userId } end }');
    await a.run(SERVER, t.service.baseUrl, ws.apiKey, JSON.stringify({ maxBodyBytes: 32 * 1024 }));
    const [coins, q1] = await a.run('local s = STORE:open(13) return s.data.coins, s.data.quests.q1');
    expect([coins, q1]).to.deep.equal([3, true]);
    const [err] = await a.run('return select(2, pcall(STORE.open, STORE, 14))');
    expect(err).to.match(/^PlayerData\.migrate: MIGRATION_INVALID: player 14: the migrated data is \d+ bytes as JSON; one request carries at most 32768/);
    expect(migrationsOf(a)).to.have.length(1);
  });

  it('newSessionStore refuses a migrate option it cannot use', async () => {
    await a.run('local baseUrl, apiKey = ... PlayerData.init({ baseUrl = baseUrl, apiKey = apiKey })', t.service.baseUrl, ws.apiKey);
    const [e1, e2] = await a.run(`
      return select(2, pcall(PlayerData.newSessionStore, { bindToClose = false, migrate = { map = function() end } })),
        select(2, pcall(PlayerData.newSessionStore, { bindToClose = false, migrate = { from = function() end, attempts = 0 } }))`);
    expect(e1).to.match(/^PlayerData\.newSessionStore: INVALID_ARGUMENT: migrate\.from must be a function/);
    expect(e2).to.match(/^PlayerData\.newSessionStore: INVALID_ARGUMENT: migrate\.attempts must be a whole number/);
  });
});

describe('Luau migration on a Redis Cluster (3 masters + 3 replicas)', function () {
  this.timeout(60_000);
  const ADMIN_TOKEN = 'migration-cluster-admin-token-0123';
  let cluster: TestCluster;
  let service: RunningService;
  let apiKey: string;
  let a: LuauVm;
  let b: LuauVm;
  before(async () => {
    cluster = await startCluster();
    const config = loadConfig({
      REDIS_CLUSTER_NODES: cluster.seeds,
      PORT: '0',
      HOST: '127.0.0.1',
      ADMIN_PORT: '0',
      ADMIN_TOKEN,
      LOG_LEVEL: 'silent',
    });
    service = await startService(config, createLogger(config));
    const created = await call({ baseUrl: `${service.opsUrl}/admin/v1` }, 'POST', '/workspaces', {
      body: { name: 'Migration', plan: 'pro' },
      headers: { authorization: `Bearer ${ADMIN_TOKEN}` },
    });
    expect(created.status, created.text).to.equal(201);
    apiKey = created.body.data.apiKey;
    a = await startLuauVm(0);
    b = await startLuauVm(1);
  });
  after(async () => {
    await service?.close();
    await cluster?.stop();
  });
  beforeEach(async () => {
    old.reset();
    await a.reset();
    await b.reset();
    for (const vm of [a, b]) {
      await vm.run(ONE_KEY);
      await vm.run(SERVER, service.baseUrl, apiKey, '{}');
    }
  });
  const stored = async (userId: number) => (await call(service, 'GET', `/data?userId=${userId}`, { key: apiKey })).body;

  it('players on every master move over once each; a second server never reads them again; no node answers CROSSSLOT', async () => {
    for (let id = 1; id <= 20; id++) old.seed('PlayerData', `Player_${id}`, { Coins: id });
    await a.run('for id = 1, 20 do STORE:open(id) end game.__close()');
    await b.run('for id = 1, 20 do STORE:open(id) end');
    const [sum] = await b.run('local n = 0 for id = 1, 20 do n += STORE:find(id).data.coins end return n');
    expect(sum).to.equal(210);
    expect(old.calls).to.have.length(20);
    expect(migrationsOf(a)).to.have.length(20);
    expect(migrationsOf(b)).to.have.length(0);
    expect((await stored(13)).data.migratedFrom.sources[0].key).to.equal('Player_13');
    let crossSlot = 0;
    for (const node of cluster.nodes) {
      const redis = new Redis({ port: node.port, host: '127.0.0.1' });
      const stats = await redis.info('errorstats');
      redis.disconnect();
      crossSlot += Number(/errorstat_CROSSSLOT:count=(\d+)/.exec(stats)?.[1] ?? 0);
    }
    expect(crossSlot).to.equal(0);
  });

  it('a stalled server is fenced off and a failing old store writes nothing, as on a single Redis', async () => {
    old.seed('PlayerData', 'Player_30', { Coins: 1 });
    old.faults.push({ op: 'GetAsync', delaySeconds: 60 });
    await a.run('OPEN(30) task.wait(1)'); // acquired at the end of the join window, then stalled
    await b.run('OPEN(30) task.wait(40)');
    await a.run('task.wait(70)');
    expect((await a.run('return OPENED[30]'))[0]).to.match(/^PlayerData\.migrate: SESSION_LOST: /);
    expect(await b.run('return OPENED[30].data.coins')).to.deep.equal([1]);
    expect((await stored(30)).version).to.equal(1);

    old.seed('PlayerData', 'Player_31', { Coins: 5 });
    for (let i = 0; i < 5; i++) old.faults.push({ op: 'GetAsync', key: 'Player_31', error: INTERNAL_ERROR });
    const [err] = await a.run('return select(2, pcall(STORE.open, STORE, 31))');
    expect(errorCodeOf(err)).to.equal('OLD_STORE_FAILED');
    expect((await stored(31)).code).to.equal('PLAYER_NOT_FOUND');
    expect(await b.run('return STORE:open(31).data.coins')).to.deep.equal([5]);
  });
});

const errorCodeOf = (err: unknown) => /^PlayerData\.\w+: ([A-Z0-9_]+): /.exec(String(err))?.[1];

describe('DataStoreService stand-in (as the platform documents it)', () => {
  let vm: LuauVm;
  before(async () => {
    vm = await startLuauVm(0);
  });
  beforeEach(async () => {
    old.reset();
    await vm.reset();
  });

  it('GetAsync returns nil for a missing key, a fresh copy and its key info for a stored one; errors are plain strings', async () => {
    const [missing, missingInfo, version, a1, copy, created, emptyKey, longKey] = await vm.run(`
      local ds = game:GetService("DataStoreService"):GetDataStore("Saves")
      local missing, missingInfo = ds:GetAsync("nobody")
      local version = ds:SetAsync("p1", { a = 1 })
      local v1, info = ds:GetAsync("p1")
      v1.a = 99
      local v2 = ds:GetAsync("p1")
      return missing == nil, missingInfo == nil, version == info.Version, v2.a, v1 ~= v2, type(info.CreatedTime),
        select(2, pcall(ds.GetAsync, ds, "")), select(2, pcall(ds.GetAsync, ds, string.rep("k", 51)))`);
    expect([missing, missingInfo, version, a1, copy, created]).to.deep.equal([true, true, true, 1, true, 'number']);
    expect(emptyKey).to.equal("101: Key name can't be empty.");
    expect(longKey).to.equal('102: Key name exceeds the 50 character limit.');
  });

  it('values up to 4 MiB serialized are kept, one byte more is refused with 105', () => {
    // Built on the host side: luau-web's fixed heap (~17 MB for every VM) cannot hold 4 MiB twice.
    const fits = 'x'.repeat(MAX_VALUE_BYTES - 2); // plus the two quotes of its JSON
    old.seed('Big', 'k', fits);
    expect((old.peek('Big', 'k') as string).length).to.equal(MAX_VALUE_BYTES - 2);
    expect(() => old.seed('Big', 'k2', `${fits}x`)).to.throw('105: Serialized value exceeds 4MB limit.');
    expect(old.peek('Big', 'k2')).to.equal(undefined);
  });

  it('a read is cached for 4 s unless UseCache is false; injected failures raise as the platform\'s do, delays yield', async () => {
    old.seed('Saves', 'p', 1);
    old.faults.push({ op: 'GetAsync', key: 'p', error: INTERNAL_ERROR });
    const [err] = await vm.run('return select(2, pcall(function() return game:GetService("DataStoreService"):GetDataStore("Saves"):GetAsync("p") end))');
    expect(err).to.equal(INTERNAL_ERROR);
    await vm.run(`
      DS = game:GetService("DataStoreService"):GetDataStore("Saves")
      NOCACHE = Instance.new("DataStoreGetOptions") NOCACHE.UseCache = false
      DS:GetAsync("p")`);
    old.seed('Saves', 'p', 2);
    const [cached, fresh] = await vm.run('return DS:GetAsync("p"), DS:GetAsync("p", NOCACHE)');
    expect([cached, fresh]).to.deep.equal([1, 2]);
    const [later] = await vm.run('task.wait(5) return DS:GetAsync("p")');
    expect(later).to.equal(2);
    expect(old.calls.map((c) => c.cached)).to.deep.equal([false, false, true, false, false]);
    old.faults.push({ op: 'GetAsync', delaySeconds: 7 });
    const [waited] = await vm.run('local t0 = os.clock() DS:GetAsync("p", NOCACHE) return os.clock() - t0');
    expect(waited).to.be.within(7, 7.1);
  });
});

describe('docs/migration.md server script (against the service)', () => {
  const t = useService();
  const doc = readFileSync(new URL('../../docs/migration.md', import.meta.url), 'utf8');
  const blocks = [...doc.matchAll(/```luau\n([\s\S]*?)```/g)].map((m) => m[1]!);
  const PLACEHOLDER_URL = 'https://pds.example.com/api/v1';
  let vm: LuauVm;
  before(async () => {
    vm = await startLuauVm(0);
  });

  it('has two Luau blocks: the server script (with the placeholder URL) and the copy back', () => {
    expect(blocks).to.have.length(2);
    expect(blocks[0]).to.include(PLACEHOLDER_URL);
  });

  it('runs as written: joins migrate (missing keys too), a failing old store kicks the player, the rejoin migrates', async () => {
    const ws = await newWorkspace(t.redis);
    old.reset();
    await vm.reset();
    await vm.run('__setSecret("pds_api_key", ...)', ws.apiKey);
    old.seed('PlayerData', 'Player_201', OLD_PLAYER);
    old.seed('PlayerData', 'Player_203', OLD_PLAYER);
    for (let i = 0; i < 5; i++) old.faults.push({ op: 'GetAsync', key: 'Player_203', error: INTERNAL_ERROR });
    await vm.run('game:GetService("Players").__present(201)');
    await vm.run(`${blocks[0]!.split(PLACEHOLDER_URL).join(t.service.baseUrl)}\nSTORE = store`);
    await vm.run('game:GetService("Players").__join(202) game:GetService("Players").__join(203) task.wait(10)');

    const get = async (userId: number) => (await call(t.service, 'GET', `/data?userId=${userId}`, { key: ws.apiKey })).body;
    const p201 = await get(201);
    expect(p201.data).to.deep.include({ coins: 120, level: 7, inventory: ['sword', 'shield'] });
    expect(p201.data.migratedFrom.sources[0]).to.include({ store: 'PlayerData', key: 'Player_201', found: true });
    expect((await get(202)).data.migratedFrom.sources[0]).to.include({ found: false });
    const [kicked] = await vm.run('return KICKED[1]');
    expect(kicked).to.equal('203: Your data could not be loaded. Please rejoin.');
    expect((await get(203)).code).to.equal('PLAYER_NOT_FOUND');
    const [warned] = await vm.run('return table.concat(WARNINGS, "\\n")');
    expect(warned).to.include('migration failed for 203: PlayerData.migrate: OLD_STORE_FAILED');

    await vm.run('game:GetService("Players").__join(203) task.wait(1)');
    expect((await get(203)).data).to.deep.include({ coins: 120, level: 7 });
    const [printed] = await vm.run('return table.concat(PRINTS, "\\n")');
    expect((printed as string).split('\n')).to.deep.equal([
      'migrated 201 from Player_201 (1 moved, 0 failed)',
      'migrated 202 from Player_202 (2 moved, 0 failed)',
      'migrated 203 from Player_203 (3 moved, 1 failed)',
    ]);
    expect(await vm.run('return #ERRORS')).to.deep.equal([0]);

    // Rolling back to the old store: the copy back writes the service's data into the old key.
    await vm.run('local s = STORE:find(201) s.data.coins = 500 s:save()');
    const [copied, never] = await vm.run(`local copyBack = (function()\n${blocks[1]!}\nend)()\nreturn copyBack(201), copyBack(999)`);
    expect([copied, never]).to.deep.equal([true, false]);
    expect(old.peek('PlayerData', 'Player_201')).to.deep.equal({ Coins: 500, Level: 7, Inventory: ['sword', 'shield'] });
  });
});
