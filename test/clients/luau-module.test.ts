// The Luau PlayerData module, run as shipped in a Luau VM against the real service and Redis.
import { expect } from 'chai';
import type { CreatedWorkspace } from '../../src/admin/operations.js';
import { keys } from '../../src/store/keys.js';
import { call, newWorkspace, useService } from '../support/service.js';
import { unreachableBaseUrl } from './unreachable.js';
import { startLuauVm, type LuauVm } from './luau-vm.js';

const INIT = 'local baseUrl, apiKey = ...; return PlayerData.init({ baseUrl = baseUrl, apiKey = apiKey })';

/** Runs `body` under pcall; resolves to the error message, or fails the test if nothing raised. */
async function luauError(vm: LuauVm, body: string, ...args: Array<string | number | boolean>): Promise<string> {
  const [ok, err] = await vm.run(`local ok, err = pcall(function(...) ${body} end, ...) return ok, tostring(err)`, ...args);
  expect(ok, `expected an error from: ${body}`).to.equal(false);
  return err as string;
}

describe('Luau PlayerData module (in a Luau VM, against the service)', () => {
  const t = useService();
  let ws: CreatedWorkspace;
  let vm: LuauVm;
  before(async () => {
    vm = await startLuauVm();
  });
  beforeEach(async () => {
    ws = await newWorkspace(t.redis, 'pro', 'Luau Studio');
    await vm.reset();
  });

  const init = () => vm.run(INIT, t.service.baseUrl, ws.apiKey);
  /** The value as the server stores it, read over plain HTTP (independent of the Luau JSON). */
  const stored = async (userId: string, key: string) =>
    (await call(t.service, 'GET', `/data?userId=${userId}&key=${encodeURIComponent(key)}`, { key: ws.apiKey })).body;

  it('the platform stand-in survives as many resets as a full test run makes (os stays one level over the real one)', async () => {
    for (let i = 0; i < 120; i++) await vm.reset();
    const [year, clock] = await vm.run('return os.date("!*t").year, os.clock()');
    expect(year).to.equal(new Date().getUTCFullYear());
    expect(clock).to.be.a('number');
  });

  describe('init and ping', () => {
    it('init pings once with the key and returns the workspace; ping returns it again', async () => {
      await vm.run(
        'local baseUrl, apiKey = ...; PlayerData.init({ baseUrl = baseUrl .. "/", apiKey = apiKey })',
        t.service.baseUrl,
        ws.apiKey,
      );
      expect(vm.requests).to.have.length(1);
      expect(vm.requests[0]).to.include({ method: 'GET', url: `${t.service.baseUrl}/ping` });
      expect(vm.requests[0]!.headers).to.deep.equal({ 'x-api-key': ws.apiKey });
      const [id, name, plan] = await vm.run('local w = PlayerData.ping() return w.workspaceId, w.workspaceName, w.plan');
      expect([id, name, plan]).to.deep.equal([ws.workspaceId, 'Luau Studio', 'pro']);
      expect(vm.requests).to.have.length(2);
    });

    it('init fails loudly with the server message on a bad key, and the module stays unusable', async () => {
      const revoked = 'pds_' + 'x'.repeat(40);
      const server = await call(t.service, 'GET', '/ping', { key: revoked });
      const err = await luauError(vm, INIT.replace('return ', ''), t.service.baseUrl, revoked);
      expect(server.body.code).to.equal('UNAUTHORIZED');
      expect(err).to.equal(`PlayerData.init: UNAUTHORIZED: HTTP 401: ${server.body.error}`);
      expect(await luauError(vm, 'PlayerData.get(1, "coins")')).to.match(/^PlayerData\.get: NOT_INITIALIZED: call PlayerData\.init/);
    });

    it('a failed init after a good one leaves the module refusing, not on the old key', async () => {
      await init();
      await luauError(vm, INIT.replace('return ', ''), t.service.baseUrl, 'wrong');
      expect(await luauError(vm, 'PlayerData.ping()')).to.match(/^PlayerData\.ping: NOT_INITIALIZED: call PlayerData\.init/);
    });

    it('init names a wrong base URL instead of failing later', async () => {
      const err = await luauError(vm, INIT.replace('return ', ''), t.service.baseUrl.replace('/api/v1', ''), ws.apiKey);
      expect(err).to.match(/^PlayerData\.init: NOT_FOUND: HTTP 404: No such endpoint: GET \/ping$/);
      expect(vm.requests, 'a 404 is not retried').to.have.length(1);
    });

    it('a network failure is tried 5 times (the default), then an error naming the operation and NETWORK_ERROR', async () => {
      const err = await luauError(vm, INIT.replace('return ', ''), await unreachableBaseUrl(), ws.apiKey);
      expect(err).to.match(/^PlayerData\.init: NETWORK_ERROR: request failed: HttpError: ConnectFail/);
      expect(vm.requests).to.have.length(5);
      const [code] = await vm.run('return PlayerData.errorCode(...)', err);
      expect(code).to.equal('NETWORK_ERROR');
    });

    it('every function refuses before init, without a request', async () => {
      for (const [name, args] of [
        ['ping', ''],
        ['get', '1, "k"'],
        ['getAll', '1'],
        ['set', '1, "k", 1'],
        ['increment', '1, "k"'],
        ['delete', '1'],
        ['batch', '1, {}'],
        ['batchPlayers', '{ { userId = 1, ops = {} } }'],
        ['acquireSession', '1'],
        ['renewSession', '1, "ses_x"'],
        ['releaseSession', '1, "ses_x"'],
        ['newSessionStore', ''],
      ]) {
        const err = await luauError(vm, `PlayerData.${name}(${args})`);
        expect(err).to.match(new RegExp(`^PlayerData\\.${name}: NOT_INITIALIZED: call PlayerData\\.init\\(`));
      }
      expect(vm.requests).to.have.length(0);
    });
  });

  describe('values', () => {
    beforeEach(init);

    const values: Array<[string, unknown]> = [
      ['integer', 42],
      ['negative fraction', -3.5],
      ['0.1', 0.1],
      ['large integer', 9007199254740991],
      ['tiny', 1.5e-300],
      ['string', 'hello'],
      ['empty string', ''],
      ['escapes and unicode', 'quote " backslash \\ slash / nl \n tab \t ctl \u0001 é 😀 \u2028'],
      ['true', true],
      ['false', false],
      ['array of strings', ['sword', 'shield']],
      ['empty array', []],
      ['object', { level: 3, name: 'Ann', tags: ['a', 'b'], nested: { deep: { ok: true, n: -0.25 } } }],
      ['array of objects', [{ id: 1 }, { id: 2, extra: 'x' }]],
    ];
    for (const [label, value] of values) {
      it(`round-trips ${label}`, async () => {
        const [json] = await vm.run(
          'local valueJson = ...; PlayerData.set(7, "v", JSON.decode(valueJson)); return JSON.encode(PlayerData.get(7, "v"))',
          JSON.stringify(value),
        );
        expect(JSON.parse(json as string)).to.deep.equal(value);
        expect((await stored('7', 'v')).data.value).to.deep.equal(value);
      });
    }

    it('set sends JSON with the Content-Type header, and Luau tables come back as tables', async () => {
      const [count, first, second, level] = await vm.run(`
        PlayerData.set(7, "inventory", { "sword", "shield" })
        PlayerData.set(7, "profile", { level = 3, name = "Ann" })
        local inventory = PlayerData.get(7, "inventory")
        local profile = PlayerData.get(7, "profile")
        return #inventory, inventory[1], inventory[2], profile.level`);
      expect([count, first, second, level]).to.deep.equal([2, 'sword', 'shield', 3]);
      const set = vm.requests.find((r) => r.url.endsWith('/data/set'))!;
      expect(set.method).to.equal('POST');
      expect(set.headers).to.have.keys('x-api-key', 'Content-Type', 'Idempotency-Key');
      expect(set.headers).to.include({ 'x-api-key': ws.apiKey, 'Content-Type': 'application/json' });
      expect(set.headers['Idempotency-Key']).to.match(/^[0-9A-F]{8}-[0-9A-F]{4}-4[0-9A-F]{3}-[89AB][0-9A-F]{3}-[0-9A-F]{12}$/);
      expect(JSON.parse(set.body!)).to.deep.equal({ userId: '7', key: 'inventory', value: ['sword', 'shield'] });
    });

    it('get is nil for a missing key and a missing player, so `or` supplies the default', async () => {
      const [missingPlayer, withDefault] = await vm.run('return PlayerData.get(7, "coins") == nil, PlayerData.get(7, "coins") or 0');
      expect([missingPlayer, withDefault]).to.deep.equal([true, 0]);
      await vm.run('PlayerData.set(7, "gems", 1)');
      const [missingKey] = await vm.run('return PlayerData.get(7, "coins") == nil');
      expect(missingKey).to.equal(true);
    });

    it('getAll returns every key, or nil for a player with no data', async () => {
      const [none] = await vm.run('return PlayerData.getAll(8) == nil');
      expect(none).to.equal(true);
      const [json] = await vm.run(`
        PlayerData.set(8, "coins", 10)
        PlayerData.set(8, "name", "Ann")
        PlayerData.set(8, "inventory", { "sword" })
        return JSON.encode(PlayerData.getAll(8))`);
      expect(JSON.parse(json as string)).to.deep.equal({ coins: 10, name: 'Ann', inventory: ['sword'] });
    });

    it('keys with spaces and URL characters reach the right entry', async () => {
      const key = 'a b&c=d/é?#%';
      const [value, all] = await vm.run(
        'local key = ...; PlayerData.set(9, key, "x"); return PlayerData.get(9, key), PlayerData.getAll(9)[key]',
        key,
      );
      expect([value, all]).to.deep.equal(['x', 'x']);
      expect((await stored('9', key)).data.value).to.equal('x');
    });
  });

  describe('increment and delete', () => {
    beforeEach(init);

    it('increment adds amount (default 1) from defaultValue (default 0) and returns the new value', async () => {
      const results = await vm.run(`
        local first = PlayerData.increment(5, "coins")
        local second = PlayerData.increment(5, "coins", 5)
        local fromDefault = PlayerData.increment(5, "gems", 10, 100)
        local down = PlayerData.increment(5, "gems", -20.5)
        local tenth = PlayerData.increment(5, "f", 0.1)
        local sum = PlayerData.increment(5, "f", 0.2)
        return first, second, fromDefault, down, tenth, sum, (PlayerData.get(5, "coins"))`);
      expect(results).to.deep.equal([1, 6, 110, 89.5, 0.1, 0.30000000000000004, 6]);
      const body = JSON.parse(vm.requests.find((r) => r.url.endsWith('/data/increment'))!.body!);
      expect(body).to.deep.equal({ userId: '5', key: 'coins' });
    });

    it('increment of a value that is not a number raises with 409 and the server message', async () => {
      await vm.run('PlayerData.set(5, "name", "Ann")');
      const server = await call(t.service, 'POST', '/data/increment', { key: ws.apiKey, body: { userId: 5, key: 'name' } });
      expect(server.status).to.equal(409);
      expect(server.body.code).to.equal('NOT_A_NUMBER');
      const err = await luauError(vm, 'PlayerData.increment(5, "name", 1)');
      expect(err).to.equal(`PlayerData.increment: NOT_A_NUMBER: HTTP 409: ${server.body.error}`);
    });

    it('delete removes one key or the whole player and returns how many keys went', async () => {
      const [one, again, rest, after] = await vm.run(`
        PlayerData.set(6, "a", 1)
        PlayerData.set(6, "b", 2)
        PlayerData.set(6, "c", 3)
        return (PlayerData.delete(6, "a")), (PlayerData.delete(6, "a")), (PlayerData.delete(6)), PlayerData.getAll(6) == nil`);
      expect([one, again, rest, after]).to.deep.equal([1, 0, 2, true]);
      const bodies = vm.requests.filter((r) => r.url.endsWith('/data/delete')).map((r) => JSON.parse(r.body!));
      expect(bodies).to.deep.equal([{ userId: '6', key: 'a' }, { userId: '6', key: 'a' }, { userId: '6' }]);
    });
  });

  describe('user ids and errors', () => {
    beforeEach(init);

    it('a number and its digits as a string are the same player, also for large ids', async () => {
      const [a, b] = await vm.run(`
        PlayerData.set(123456789012, "coins", 5)
        PlayerData.increment("123456789012", "coins", 1)
        PlayerData.set("player.one_2-b", "x", true)
        return PlayerData.get(123456789012, "coins"), PlayerData.get("player.one_2-b", "x")`);
      expect([a, b]).to.deep.equal([6, true]);
      expect((await stored('123456789012', 'coins')).data.value).to.equal(6);
      expect(vm.requests.some((r) => r.url.includes('userId=123456789012&'))).to.equal(true);
    });

    it('refuses arguments it cannot send (user id, key, nil or cyclic value), before any request', async () => {
      const before = vm.requests.length;
      for (const bad of ['-1', '1.5', '""', 'nil', '{}']) {
        expect(await luauError(vm, `PlayerData.get(${bad}, "k")`)).to.match(/^PlayerData\.get: INVALID_ARGUMENT: userId must be/);
      }
      expect(await luauError(vm, 'PlayerData.set(1, "k", nil)')).to.match(/^PlayerData\.set: INVALID_ARGUMENT: value must be/);
      expect(await luauError(vm, 'PlayerData.set(1, "", 1)')).to.match(/^PlayerData\.set: INVALID_ARGUMENT: key must be/);
      expect(await luauError(vm, 'local t = {}; t.self = t; PlayerData.set(1, "k", t)')).to.equal(
        'PlayerData.set: INVALID_ARGUMENT: value.self contains itself: tables cannot be cyclic',
      );
      expect(vm.requests.length).to.equal(before);
    });

    it('a refused request raises with the operation, the status and the server message', async () => {
      const key = 'k'.repeat(129);
      const server = await call(t.service, 'POST', '/data/set', { key: ws.apiKey, body: { userId: 1, key, value: 1 } });
      expect(server.status).to.equal(400);
      expect(server.body.code).to.equal('INVALID_REQUEST');
      const before = vm.requests.length;
      const err = await luauError(vm, 'PlayerData.set(1, ..., 1)', key);
      expect(err).to.equal(`PlayerData.set: INVALID_REQUEST: HTTP 400: ${server.body.error}`);
      expect(vm.requests.length - before, 'a 400 is not retried').to.equal(1);
    });

    it('a 500 is retried, then raises with INTERNAL and its status; the value is not mistaken for nil', async () => {
      await t.redis.hset(keys.player(ws.workspaceId, '4'), 'broken', 'not an entry');
      const before = vm.requests.length;
      expect(await luauError(vm, 'PlayerData.get(4, "broken")')).to.equal('PlayerData.get: INTERNAL: HTTP 500: Internal server error');
      expect(vm.requests.length - before, 'tried 5 times').to.equal(5);
      expect(await luauError(vm, 'PlayerData.getAll(4)')).to.equal('PlayerData.getAll: INTERNAL: HTTP 500: Internal server error');
    });
  });
});

describe('Luau PlayerData module over the rate limit', () => {
  const t = useService({ RATE_LIMIT_FREE: '3' });
  let vm: LuauVm;
  before(async () => {
    vm = await startLuauVm();
  });

  it('a 429 raises with the server message and when the window resets, after exactly one request', async () => {
    const ws = await newWorkspace(t.redis, 'free');
    await vm.run(INIT, t.service.baseUrl, ws.apiKey);
    await vm.run('PlayerData.set(1, "a", 1) PlayerData.set(1, "b", 2)');
    const before = vm.requests.length;
    const err = await luauError(vm, 'PlayerData.set(1, "c", 3)');
    expect(vm.requests.length - before).to.equal(1);
    expect(err).to.match(
      /^PlayerData\.set: RATE_LIMITED: HTTP 429: Rate limit exceeded: the free plan allows 3 requests per 10 s; the window resets in (\d+) s \(retry after \1 s\)$/,
    );
  });
});
