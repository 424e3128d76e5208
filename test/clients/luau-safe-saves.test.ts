// The Luau module's calls of the safe-saves contract (docs/safe-saves.md), run as shipped in a
// Luau VM against the real service: versions, ifVersion, batches, sessions, idempotency keys with
// retries, codes, NaN refused, the key as a Secret.
import { expect } from 'chai';
import type { Redis } from 'ioredis';
import type { CreatedWorkspace } from '../../src/admin/operations.js';
import type { RunningService } from '../../src/server.js';
import { testRedisUrl } from '../support/hooks.js';
import { startRedisProxy, type RedisProxy } from '../support/redis-proxy.js';
import { call, newWorkspace, startTestService, testRedis, useService } from '../support/service.js';
import { startLuauVm, type LuauVm } from './luau-vm.js';

const INIT = 'local baseUrl, apiKey = ...; PlayerData.init({ baseUrl = baseUrl, apiKey = apiKey })';

async function luauError(vm: LuauVm, body: string, ...args: Array<string | number | boolean>): Promise<string> {
  const [ok, err] = await vm.run(`local ok, err = pcall(function(...) ${body} end, ...) return ok, tostring(err)`, ...args);
  expect(ok, `expected an error from: ${body}`).to.equal(false);
  return err as string;
}

describe('Luau PlayerData safe saves (in a Luau VM, against the service)', () => {
  const t = useService();
  let ws: CreatedWorkspace;
  let vm: LuauVm;
  before(async () => {
    vm = await startLuauVm();
  });
  beforeEach(async () => {
    ws = await newWorkspace(t.redis);
    await vm.reset();
  });

  const init = () => vm.run(INIT, t.service.baseUrl, ws.apiKey);
  const stored = async (userId: number) => {
    const res = await call(t.service, 'GET', `/data?userId=${userId}`, { key: ws.apiKey });
    return res.status === 404 ? undefined : res.body.data;
  };

  describe('versions and batches', () => {
    beforeEach(init);

    it('every read and write gives the player version: 0 before any data, one step per write', async () => {
      const results = await vm.run(`
        local none, v0 = PlayerData.get(9, "c")
        local v1 = PlayerData.set(9, "a", 1)
        local value, v2 = PlayerData.increment(9, "c", 5)
        local deleted, v3 = PlayerData.delete(9, "a")
        local noneDeleted, v3b = PlayerData.delete(9, "a")
        local c, v4 = PlayerData.get(9, "c")
        local all, v5 = PlayerData.getAll(9)
        return none == nil, v0, v1, value, v2, deleted, v3, noneDeleted, v3b, c, v4, JSON.encode(all), v5`);
      expect(results).to.deep.equal([true, 0, 1, 5, 2, 1, 3, 0, 3, 5, 3, '{"c":5}', 3]);
    });

    it('ifVersion: a stale version raises VERSION_CONFLICT and writes nothing; the current one applies', async () => {
      const [version] = await vm.run('return PlayerData.set(9, "level", 1)');
      const err = await luauError(vm, 'PlayerData.set(9, "level", 2, { ifVersion = ... })', (version as number) - 1);
      expect(err).to.match(/^PlayerData\.set: VERSION_CONFLICT: HTTP 409: /);
      const [code] = await vm.run('return PlayerData.errorCode(...)', err);
      expect(code).to.equal('VERSION_CONFLICT');
      expect(await stored(9)).to.deep.equal({ level: 1 });
      expect(await vm.run('return PlayerData.increment(9, "level", 1, 0, { ifVersion = ... })', version as number)).to.deep.equal([
        2,
        (version as number) + 1,
      ]);
    });

    it('batch: one result per op in order and one version step; a failing op writes nothing', async () => {
      await vm.run('PlayerData.set(3, "name", "Ann"); PlayerData.set(3, "step", 1)');
      const [json, version] = await vm.run(`
        local results, version = PlayerData.batch(3, {
          { op = "set", key = "inventory", value = { sword = 1 } },
          { op = "increment", key = "coins", amount = 5, defaultValue = 100 },
          { op = "delete", key = "step" },
        })
        return JSON.encode(results), version`);
      const results = JSON.parse(json as string);
      expect(results.map((r: { key: string }) => r.key)).to.deep.equal(['inventory', 'coins', 'step']);
      expect(results[1]).to.deep.equal({ key: 'coins', value: 105 });
      expect(results[2]).to.deep.equal({ key: 'step', deleted: 1 });
      expect(version).to.equal(3);
      const before = await stored(3);
      const err = await luauError(vm, `PlayerData.batch(3, {
        { op = "set", key = "inventory", value = { shield = 1 } },
        { op = "increment", key = "name", amount = 1 },
      })`);
      expect(PlayerDataCode(err)).to.equal('NOT_A_NUMBER');
      expect(await stored(3)).to.deep.equal(before);
    });

    it('batch refuses a bad op, and more than 100 ops, before any request, naming the op', async () => {
      const before = vm.requests.length;
      expect(await luauError(vm, 'PlayerData.batch(3, { { op = "set", key = "a", value = 1 }, { op = "rename", key = "b" } })')).to.equal(
        'PlayerData.batch: INVALID_ARGUMENT: ops[2].op must be set, increment or delete, got rename',
      );
      expect(await luauError(vm, 'local ops = {} for i = 1, 101 do ops[i] = { op = "delete", key = "k" .. i } end PlayerData.batch(3, ops)')).to.equal(
        'PlayerData.batch: INVALID_ARGUMENT: ops has 101 operations; at most 100',
      );
      expect(vm.requests.length).to.equal(before);
    });

    it('batchPlayers: one request; players succeed or fail on their own, a failure carries its code', async () => {
      await vm.run('PlayerData.set(21, "a", 1); PlayerData.set(22, "a", 1)');
      const before = vm.requests.length;
      const [json] = await vm.run(`
        return JSON.encode(PlayerData.batchPlayers({
          { userId = 21, ops = { { op = "increment", key = "a" } }, ifVersion = 1 },
          { userId = 22, ops = { { op = "increment", key = "a" } }, ifVersion = 7 },
        }))`);
      expect(vm.requests.length - before).to.equal(1);
      const [first, second] = JSON.parse(json as string);
      expect(first).to.include({ userId: '21', success: true, version: 2 });
      expect(second).to.include({ userId: '22', success: false, status: 409, code: 'VERSION_CONFLICT', version: 1 });
      expect((await stored(21)).a).to.equal(2);
      expect((await stored(22)).a).to.equal(1);
    });
  });

  describe('sessions', () => {
    beforeEach(init);

    it('acquire loads the data; writes then need the session id; another owner is locked out until it steals, then the old id is SESSION_LOST', async () => {
      await vm.run('PlayerData.set(5, "coins", 10)');
      const [sessionId, owner, values, version] = await vm.run(`
        local s = PlayerData.acquireSession(5, { load = true })
        A = s
        return s.sessionId, s.owner, JSON.encode(s.values), s.version`);
      const [jobId] = await vm.run('return game.JobId');
      expect(sessionId).to.match(/^ses_/);
      expect([owner, values, version]).to.deep.equal([jobId, '{"coins":10}', 1]);

      expect(PlayerDataCode(await luauError(vm, 'PlayerData.set(5, "coins", 11)'))).to.equal('SESSION_LOCKED');
      expect(await vm.run('return PlayerData.set(5, "coins", 11, { sessionId = A.sessionId })')).to.deep.equal([2]);

      const locked = await luauError(vm, 'PlayerData.acquireSession(5, { owner = "other-server" })');
      expect(locked).to.match(new RegExp(`^PlayerData\\.acquireSession: SESSION_LOCKED: HTTP 409: .* \\(held by ${jobId} until \\d{4}-`));
      await vm.run('B = PlayerData.acquireSession(5, { owner = "other-server", steal = true })');
      expect(PlayerDataCode(await luauError(vm, 'PlayerData.set(5, "coins", 99, { sessionId = A.sessionId })'))).to.equal('SESSION_LOST');
      expect(PlayerDataCode(await luauError(vm, 'PlayerData.renewSession(5, A.sessionId)'))).to.equal('SESSION_LOST');
      const [renewed] = await vm.run('return PlayerData.renewSession(5, B.sessionId, 120).sessionId == B.sessionId');
      expect(renewed).to.equal(true);
      expect(await vm.run('return PlayerData.releaseSession(5, A.sessionId), PlayerData.releaseSession(5, B.sessionId), PlayerData.releaseSession(5, B.sessionId)')).to.deep.equal([
        false,
        true,
        false,
      ]);
      expect(await vm.run('return PlayerData.set(5, "coins", 12)')).to.deep.equal([3]);
      expect((await stored(5)).coins).to.equal(12);
    });
  });

  describe('retries and idempotency keys', () => {
    it('an increment whose answer is lost 10 times is sent 11 times with one key and one body, and counts once', async () => {
      await vm.run('local baseUrl, apiKey = ...; PlayerData.init({ baseUrl = baseUrl, apiKey = apiKey, attempts = 11 })', t.service.baseUrl, ws.apiKey);
      for (let i = 0; i < 10; i++) vm.faults.push('drop-answer');
      const [value, version] = await vm.run('return PlayerData.increment(11, "coins", 7)');
      expect([value, version]).to.deep.equal([7, 1]);
      const sent = vm.requests.filter((r) => r.url.endsWith('/data/increment'));
      expect(sent).to.have.length(11);
      expect(new Set(sent.map((r) => r.headers['Idempotency-Key'])).size).to.equal(1);
      expect(new Set(sent.map((r) => r.body)).size).to.equal(1);
      expect(await stored(11)).to.deep.equal({ coins: 7 });
      const [waited] = await vm.run('return __now()');
      expect(waited, 'backed off between tries (virtual time)').to.be.greaterThan(10);
    });

    it('a request that never reached the service is retried with the same key; after the last try the error is NETWORK_ERROR', async () => {
      await init();
      vm.faults.push('connect-fail', 'connect-fail');
      expect(await vm.run('return PlayerData.set(12, "a", 1)')).to.deep.equal([1]);
      const sets = vm.requests.filter((r) => r.url.endsWith('/data/set'));
      expect(sets).to.have.length(3);
      expect(new Set(sets.map((r) => r.headers['Idempotency-Key'])).size).to.equal(1);
      for (let i = 0; i < 5; i++) vm.faults.push('connect-fail');
      const err = await luauError(vm, 'PlayerData.set(12, "a", 2)');
      expect(err).to.match(/^PlayerData\.set: NETWORK_ERROR: request failed: HttpError: ConnectFail/);
      expect((await stored(12)).a).to.equal(1);
    });

    it('every write has its own key; a given key is sent as is, and reusing it for another write is IDEMPOTENCY_KEY_REUSED, not retried', async () => {
      await init();
      await vm.run('PlayerData.set(13, "a", 1); PlayerData.set(13, "a", 1)');
      const keys = vm.requests.filter((r) => r.url.endsWith('/data/set')).map((r) => r.headers['Idempotency-Key']);
      expect(keys).to.have.length(2);
      expect(keys[0]).to.not.equal(keys[1]);
      await vm.run('PlayerData.increment(13, "b", 1, 0, { idempotencyKey = "buy-1" })');
      const before = vm.requests.length;
      const err = await luauError(vm, 'PlayerData.increment(13, "b", 2, 0, { idempotencyKey = "buy-1" })');
      expect(err).to.match(/^PlayerData\.increment: IDEMPOTENCY_KEY_REUSED: HTTP 422: /);
      expect(vm.requests.length - before).to.equal(1);
      expect(vm.requests.at(-1)!.headers['Idempotency-Key']).to.equal('buy-1');
      expect((await stored(13)).b).to.equal(1);
    });
  });

  describe('values the service cannot store', () => {
    beforeEach(init);

    it('NaN and infinite numbers are refused before any request, wherever they are, with the place named', async () => {
      const before = vm.requests.length;
      const cases: Array<[string, string]> = [
        ['PlayerData.set(1, "k", 0/0)', 'PlayerData.set: INVALID_ARGUMENT: value is nan: NaN and infinite numbers cannot be stored'],
        [
          'PlayerData.set(1, "k", { stats = { speeds = { 1, math.huge } } })',
          'PlayerData.set: INVALID_ARGUMENT: value.stats.speeds[2] is inf: NaN and infinite numbers cannot be stored',
        ],
        ['PlayerData.increment(1, "k", 0/0)', 'PlayerData.increment: INVALID_ARGUMENT: amount must be a finite number, got nan'],
        ['PlayerData.increment(1, "k", 1, -math.huge)', 'PlayerData.increment: INVALID_ARGUMENT: defaultValue must be a finite number, got -inf'],
        [
          'PlayerData.batch(1, { { op = "set", key = "a", value = 1 }, { op = "set", key = "b", value = { x = -math.huge } } })',
          'PlayerData.batch: INVALID_ARGUMENT: ops[2].value.x is -inf: NaN and infinite numbers cannot be stored',
        ],
        [
          'PlayerData.batchPlayers({ { userId = 1, ops = { { op = "increment", key = "a", amount = 0/0 } } } })',
          'PlayerData.batchPlayers: INVALID_ARGUMENT: players[1].ops[1].amount must be a finite number, got nan',
        ],
      ];
      for (const [code, message] of cases) {
        const err = await luauError(vm, code);
        // Luau prints NaN as "nan" or "-nan" depending on its sign bit.
        expect(err.replace('-nan', 'nan'), code).to.equal(message);
      }
      expect(vm.requests.length).to.equal(before);
      expect(await stored(1)).to.equal(undefined);
    });
  });

  describe('the API key as a Secret', () => {
    it('init takes HttpService:GetSecret\'s Secret, sends it as the key, and never turns it into text', async () => {
      await vm.run('__setSecret("pds_api_key", ...)', ws.apiKey);
      const [plan, kind] = await vm.run(`
        local HttpService = game:GetService("HttpService")
        local secret = HttpService:GetSecret("pds_api_key")
        local workspace = PlayerData.init({ baseUrl = (...), apiKey = secret })
        PlayerData.set(1, "a", 1)
        return workspace.plan, typeof(secret)`, t.service.baseUrl);
      expect([plan, kind]).to.deep.equal(['pro', 'Secret']);
      expect(vm.requests).to.have.length(2);
      for (const r of vm.requests) expect(r.headers['x-api-key']).to.equal(ws.apiKey);

      await vm.run('__setSecret("wrong", "pds_wrong_key_0123456789")');
      const err = await luauError(vm, 'PlayerData.init({ baseUrl = (...), apiKey = game:GetService("HttpService"):GetSecret("wrong") })', t.service.baseUrl);
      expect(err).to.match(/^PlayerData\.init: UNAUTHORIZED: HTTP 401: /);
      expect(err).to.not.include('pds_wrong_key');
      expect(await luauError(vm, 'PlayerData.init({ baseUrl = "x", apiKey = 42 })')).to.equal(
        'PlayerData.init: INVALID_ARGUMENT: expects { baseUrl = string, apiKey = string or Secret }',
      );
    });
  });
});

// A first request held inside the service (its Redis replies held by a proxy) while the Luau
// module sends the same write with the same key: the service answers IDEMPOTENCY_IN_PROGRESS,
// the module backs off, and (the first one finished meanwhile) its retry replays the first answer.
describe('Luau PlayerData and IDEMPOTENCY_IN_PROGRESS', () => {
  let proxy: RedisProxy;
  let service: RunningService;
  let redis: Redis;
  let vm: LuauVm;
  before(async () => {
    proxy = await startRedisProxy(Number(new URL(testRedisUrl()).port || 6379));
    service = await startTestService({ REDIS_URL: proxy.url });
    redis = testRedis();
    vm = await startLuauVm();
  });
  after(async () => {
    proxy.release();
    await service.close();
    await proxy.close();
    redis.disconnect();
  });

  it('is retried with the same key and body, and the write counts once', async () => {
    const ws = await newWorkspace(redis);
    await new Promise((r) => setTimeout(r, 200)); // the key's creation event passes before it is cached
    await vm.reset();
    await vm.run(INIT, service.baseUrl, ws.apiKey);
    // The key is then cached, and the rate limiter holds requests in hand: its leases grant 1, 2,
    // 3, 5, 9 requests, so after 14 requests 6 are left, and neither request below needs Redis
    // before its idempotency claim.
    await vm.run('for i = 1, 13 do PlayerData.set(1, "warm", i) end');
    proxy.reset();
    proxy.hold();
    const first = call(service, 'POST', '/data/increment', {
      key: ws.apiKey,
      body: { userId: '2', key: 'coins', amount: 5 },
      headers: { 'Idempotency-Key': 'dup-1' },
    });
    for (let i = 0; !proxy.sent().includes('NX'); i++) {
      expect(i, 'the first request reaches its idempotency claim').to.be.lessThan(400);
      await new Promise((r) => setTimeout(r, 5));
    }
    let released = false;
    vm.onClock = async () => {
      if (released) return;
      released = true;
      proxy.release();
      expect((await first).status).to.equal(200);
    };
    const [value] = await vm.run('return PlayerData.increment(2, "coins", 5, nil, { idempotencyKey = "dup-1" })');
    expect(released, 'the module backed off').to.equal(true);
    expect(value).to.equal(5);
    const sent = vm.requests.filter((r) => r.url.endsWith('/data/increment'));
    expect(sent).to.have.length(2);
    expect(new Set(sent.map((r) => r.body)).size).to.equal(1);
    const res = await call(service, 'GET', '/data?userId=2&key=coins', { key: ws.apiKey });
    expect(res.body.data.value).to.equal(5);
  });
});

function PlayerDataCode(err: string): string | undefined {
  return /PlayerData\.\w+: ([A-Z0-9_]+): /.exec(err)?.[1];
}
