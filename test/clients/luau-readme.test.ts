// The Luau code blocks of clients/luau/README.md, run as written in the Luau VM with the platform
// stand-in, against the real service. Only the placeholder URL is replaced (the key comes from
// the stand-in's GetSecret), and the server script gets one line appended that hands its local
// `store` to the test.
import { expect } from 'chai';
import { readFileSync } from 'node:fs';
import type { CreatedWorkspace } from '../../src/admin/operations.js';
import { keys } from '../../src/store/keys.js';
import { call, newWorkspace, useService } from '../support/service.js';
import { startLuauVm, type LuauVm, type RecordedRequest } from './luau-vm.js';

const readme = readFileSync(new URL('../../clients/luau/README.md', import.meta.url), 'utf8');
const blocks = [...readme.matchAll(/```luau\n([\s\S]*?)```/g)].map((m) => m[1]!);
const blockWith = (text: string) => blocks.find((code) => code.includes(text));
const SERVER_SCRIPT = blockWith('MarketplaceService.ProcessReceipt = function(receipt)\n\tlocal coins');
const ERROR_EXAMPLE = blockWith('PlayerData.errorCode(err)');
const RECEIPT_WITHOUT_SESSIONS = blockWith('idempotencyKey = "purchase-"');
const BATCH_EXAMPLE = blockWith('PlayerData.batch(userId');
const MOCK_PLAY_TEST = blockWith('mock = true');
const FEATURES_EXAMPLE = blockWith('local function giftCoins(');
const PLACEHOLDER_URL = 'https://pds.example.com/api/v1';

function withUrl(code: string | undefined, baseUrl: string): string {
  expect(code, 'README code block').to.be.a('string');
  expect(code, 'README example uses the placeholder URL').to.include(PLACEHOLDER_URL);
  return code!.split(PLACEHOLDER_URL).join(baseUrl);
}

const bodyOf = (r: RecordedRequest) => JSON.parse(r.body!);

describe('clients/luau/README.md examples (against the service)', () => {
  // A restore point a second, so that the features example can read an older version.
  const t = useService({ HISTORY_INTERVAL_SECONDS: '1' });
  let ws: CreatedWorkspace;
  let vm: LuauVm;
  before(async () => {
    vm = await startLuauVm();
  });
  beforeEach(async () => {
    ws = await newWorkspace(t.redis);
    await vm.reset();
    await vm.run('__setSecret("pds_api_key", ...)', ws.apiKey);
  });

  const stored = async (userId: number) => {
    const res = await call(t.service, 'GET', `/data?userId=${userId}`, { key: ws.apiKey });
    return res.status === 404 ? undefined : res.body.data;
  };
  const batches = (from = 0) => vm.requests.slice(from).filter((r) => r.url.endsWith('/data/batch'));
  const runServerScript = () => vm.run(`${withUrl(SERVER_SCRIPT, t.service.baseUrl)}\nSTORE = store`);

  it('has the six examples this test runs, and the leaderboard one (luau-leaderboard.test.ts)', () => {
    expect(blocks).to.have.length(7);
    const found = [SERVER_SCRIPT, ERROR_EXAMPLE, RECEIPT_WITHOUT_SESSIONS, BATCH_EXAMPLE, MOCK_PLAY_TEST, FEATURES_EXAMPLE];
    expect(new Set(found).size).to.equal(6);
    for (const code of found) expect(code).to.be.a('string');
  });

  it('the mock store\'s play-test runs in "Studio" over memory only, and unchanged against the service live', async () => {
    await vm.run('__STUDIO = true');
    await vm.run(withUrl(MOCK_PLAY_TEST, t.service.baseUrl));
    expect(vm.requests, 'no HTTP at all').to.have.length(0);
    expect(await vm.run('return PRINTS[1], #WARNINGS, #ERRORS')).to.deep.equal(['coins after the gift: 50', 0, 0]);
    expect(await stored(1), 'nothing reached the service').to.equal(undefined);

    await vm.reset();
    await vm.run('__setSecret("pds_api_key", ...)', ws.apiKey);
    await vm.run(withUrl(MOCK_PLAY_TEST, t.service.baseUrl));
    expect(vm.requests.length).to.be.greaterThan(0);
    expect(await vm.run('return PRINTS[1], #WARNINGS, #ERRORS')).to.deep.equal(['coins after the gift: 50', 0, 0]);
    expect(await stored(1)).to.deep.equal({ coins: 50, level: 1 });
  });

  it('the features example: deep template, a gift sent twice applied once, hooks, metadata, a restored version, shutdown', async () => {
    await call(t.service, 'POST', '/data/set', { key: ws.apiKey, body: { userId: 201, key: 'settings', value: { music: false } } });
    await call(t.service, 'POST', '/data/set', { key: ws.apiKey, body: { userId: 201, key: 'inventory', value: ['axe'] } });
    await new Promise((resolve) => setTimeout(resolve, 1100)); // version 2 becomes a restore point
    await vm.run('local baseUrl, apiKey = ...; PlayerData.init({ baseUrl = baseUrl, apiKey = apiKey })', t.service.baseUrl, ws.apiKey);
    await vm.run(`${FEATURES_EXAMPLE}\nSTORE, ON_OPENED, GIFT, RESTORE = store, onOpened, giftCoins, restoreVersion`);
    const [settings] = await vm.run('S = STORE:open(201) ON_OPENED(S) return JSON.encode(S.data.settings)');
    expect(JSON.parse(settings as string)).to.deep.equal({ music: false, sfx: true });
    await vm.run('GIFT(201, 25, "g1") GIFT(201, 25, "g1")');
    const waiting = await call(t.service, 'GET', '/messages?userId=201', { key: ws.apiKey });
    expect(waiting.body.data.messages, 'the retried gift is one gift').to.have.length(1);
    await vm.run('S:save() S:save()');
    const saved = await stored(201);
    expect(saved.coins).to.equal(25);
    expect(saved.lastSeen).to.be.a('number');
    expect((await call(t.service, 'GET', '/messages?userId=201', { key: ws.apiKey })).body.data.messages).to.deep.equal([]);
    const [prints] = await vm.run('return table.concat(PRINTS, "|")');
    expect(prints).to.equal('session 1 of player 201|player 201 saved at version 3|player 201 saved at version 4');

    await vm.run('RESTORE(S, 2)');
    const restored = await stored(201);
    expect(restored).to.deep.include({ settings: { music: false, sfx: true }, inventory: ['axe'], coins: 0 });
    await vm.run('game.__close()');
    expect(await vm.run('return #KICKED, #WARNINGS, #ERRORS')).to.deep.equal([0, 0, 0]);
  });

  it('the server script: sessions for players present and joining, receipts once, one auto-save, close, BindToClose', async () => {
    await call(t.service, 'POST', '/data/set', { key: ws.apiKey, body: { userId: 101, key: 'level', value: 5 } });
    await call(t.service, 'POST', '/data/set', { key: ws.apiKey, body: { userId: 101, key: 'inventory', value: ['axe'] } });
    await vm.run('game:GetService("Players").__present(101)');
    await runServerScript();
    // A join is acquired at the end of the join window (joinBatchSeconds, 0.25 s).
    await vm.run('game:GetService("Players").__join(102) task.wait(1)');

    // The player present at the start and the one joining in the same moment: one acquire.
    const acquires = vm.requests.filter((r) => r.url.endsWith('/sessions/acquire'));
    expect(acquires).to.have.length(1);
    expect(bodyOf(acquires[0]!).players).to.deep.equal(['101', '102']);
    const [jobId] = await vm.run('return game.JobId');
    for (const r of acquires) expect(bodyOf(r)).to.include({ owner: jobId, load: true });
    expect(acquires[0]!.headers['x-api-key'], 'the Secret reached the header').to.equal(ws.apiKey);

    const [granted, again, unknown] = await vm.run(`
      local receipt = { PlayerId = 102, ProductId = 1234567, PurchaseId = "p1" }
      local MarketplaceService = game:GetService("MarketplaceService")
      return MarketplaceService.ProcessReceipt(receipt), MarketplaceService.ProcessReceipt(receipt),
        MarketplaceService.ProcessReceipt({ PlayerId = 102, ProductId = 42, PurchaseId = "p2" })`);
    expect([granted, again, unknown]).to.deep.equal(['PurchaseGranted', 'PurchaseGranted', 'NotProcessedYet']);
    expect(await stored(102)).to.deep.equal({ coins: 100, level: 1, inventory: [], purchases: { p1: true } });

    // One auto-save for both players, in one request, with their session ids.
    const before = vm.requests.length;
    await vm.run('STORE:find(101).data.level = 6; task.wait(61)');
    const autoSave = batches(before);
    expect(autoSave).to.have.length(1);
    const players = bodyOf(autoSave[0]!).players as Array<{ userId: string; sessionId: string; ops: unknown[] }>;
    expect(players.map((p) => p.userId).sort()).to.deep.equal(['101', '102']);
    for (const p of players) expect(p.sessionId).to.match(/^ses_/);
    expect(autoSave[0]!.headers['Idempotency-Key']).to.be.a('string');
    const ops101 = players.find((p) => p.userId === '101')!.ops;
    expect(ops101).to.deep.include.members([
      { op: 'set', key: 'level', value: 6 },
      { op: 'set', key: 'coins', value: 0 },
      { op: 'set', key: 'purchases', value: [] },
    ]);
    expect(ops101).to.have.length(3);
    expect(players.find((p) => p.userId === '102')!.ops, 'nothing changed, the lease is renewed').to.deep.equal([]);

    // Leave: one request that saves and releases; the lock is free afterwards. (Just after an
    // auto-save, the close does not carry 102's: luau-joins.test.ts has the close that does.)
    const beforeLeave = vm.requests.length;
    await vm.run('game:GetService("Players").__leave(101)');
    expect(vm.requests.length - beforeLeave).to.equal(1);
    expect(bodyOf(batches(beforeLeave)[0]!).players).to.have.length(1);
    expect(bodyOf(batches(beforeLeave)[0]!).players[0]).to.include({ userId: '101', release: true });
    expect(await stored(101)).to.deep.equal({ level: 6, inventory: ['axe'], coins: 0, purchases: [] });
    const free = await call(t.service, 'POST', '/data/set', { key: ws.apiKey, body: { userId: 101, key: 'x', value: 1 } });
    expect(free.status, 'released').to.equal(200);

    // BindToClose: 102 and 103 in one request; their leaves afterwards send nothing.
    await vm.run('game:GetService("Players").__join(103) task.wait(1) STORE:find(103).data.level = 2');
    const beforeClose = vm.requests.length;
    const [stillRunning] = await vm.run(`
      local running = game.__close()
      game:GetService("Players").__leave(102)
      game:GetService("Players").__leave(103)
      return running`);
    expect(stillRunning).to.equal(0);
    expect(vm.requests.length - beforeClose).to.equal(1);
    const close = bodyOf(batches(beforeClose)[0]!).players as Array<{ userId: string; release: boolean }>;
    expect(close.map((p) => [p.userId, p.release]).sort()).to.deep.equal([
      ['102', true],
      ['103', true],
    ]);
    expect(await stored(103)).to.deep.equal({ coins: 0, level: 2, inventory: [], purchases: [] });
    expect(await vm.run('return #WARNINGS, #ERRORS, #KICKED')).to.deep.equal([0, 0, 0]);
  });

  it('the server script kicks a player whose data cannot be loaded, and saves nothing over it', async () => {
    await t.redis.hset(keys.player(ws.workspaceId, '105'), 'broken', 'not an entry');
    await runServerScript();
    // The join's thread backs off between its tries (on the virtual clock), so time must pass.
    const [kicked, warning] = await vm.run('game:GetService("Players").__join(105) task.wait(30) return KICKED[1], WARNINGS[1]');
    expect(kicked).to.equal('105: Your data could not be loaded. Please rejoin.');
    expect(warning).to.match(/^PlayerData\.acquireSession: INTERNAL: HTTP 500/);
    expect(vm.requests.filter((r) => r.url.endsWith('/sessions/acquire')), 'tried 5 times').to.have.length(5);
    expect(batches()).to.have.length(0);
    expect(await t.redis.hget(keys.player(ws.workspaceId, '105'), 'broken')).to.equal('not an entry');
  });

  it('the server script kicks a player whose session another server took over', async () => {
    await runServerScript();
    await vm.run('game:GetService("Players").__join(106) task.wait(1) STORE:find(106).data.coins = 5');
    const other = await call(t.service, 'POST', '/sessions/acquire', {
      key: ws.apiKey,
      body: { userId: 106, owner: 'another-server', steal: true },
    });
    expect(other.status).to.equal(200);
    await vm.run('task.wait(61)');
    expect(await vm.run('return KICKED[1]')).to.deep.equal(['106: Your data was opened on another server. Please rejoin.']);
    expect(await stored(106), 'the lost session wrote nothing').to.equal(undefined);
  });

  it('the error example decides by code: a stale version is handled, any other error raised', async () => {
    await vm.run('local baseUrl, apiKey = ...; PlayerData.init({ baseUrl = baseUrl, apiKey = apiKey })', t.service.baseUrl, ws.apiKey);
    const [version] = await vm.run('return PlayerData.set(7, "level", 1)');
    const example = `local userId, version = ... ${ERROR_EXAMPLE} return ok`;
    expect(await vm.run(example, 7, (version as number) - 1)).to.deep.equal([false]);
    expect((await stored(7)).level).to.equal(1);
    expect(await vm.run(example, 7, version as number)).to.deep.equal([true]);
    expect((await stored(7)).level).to.equal(5);
    const [ok, err] = await vm.run(`return pcall(function(...) ${example} end, ...)`, -1, 0);
    expect([ok, err]).to.deep.equal([false, 'PlayerData.set: INVALID_ARGUMENT: userId must be a non-negative whole number or a non-empty string, got -1']);
  });

  it('the receipt example without sessions counts a purchase once, also when its answer is lost and it is offered again', async () => {
    await vm.run('local baseUrl, apiKey = ...; PlayerData.init({ baseUrl = baseUrl, apiKey = apiKey })', t.service.baseUrl, ws.apiKey);
    await vm.run(`local MarketplaceService = game:GetService("MarketplaceService") ${RECEIPT_WITHOUT_SESSIONS}`);
    vm.faults.push('drop-answer', 'drop-answer');
    const receipt = '{ PlayerId = 301, ProductId = 1, PurchaseId = "r-1" }';
    const [first, second] = await vm.run(`
      local process = game:GetService("MarketplaceService").ProcessReceipt
      return process(${receipt}), process(${receipt})`);
    expect([first, second]).to.deep.equal(['PurchaseGranted', 'PurchaseGranted']);
    const increments = vm.requests.filter((r) => r.url.endsWith('/data/increment'));
    expect(increments).to.have.length(4);
    expect(new Set(increments.map((r) => r.headers['Idempotency-Key']))).to.deep.equal(new Set(['purchase-r-1']));
    expect(new Set(increments.map((r) => r.body)).size).to.equal(1);
    expect(await stored(301)).to.deep.equal({ coins: 100 });
  });

  it('the batch example applies its three ops at once and returns the results and the version', async () => {
    await vm.run('local baseUrl, apiKey = ...; PlayerData.init({ baseUrl = baseUrl, apiKey = apiKey })', t.service.baseUrl, ws.apiKey);
    await vm.run('PlayerData.set(8, "coins", 80); PlayerData.set(8, "tutorialStep", 3)');
    const [json, version] = await vm.run(`local userId = ... ${BATCH_EXAMPLE} return JSON.encode(results), version`, 8);
    const results = JSON.parse(json as string);
    expect(results).to.have.length(3);
    expect(results[1]).to.deep.equal({ key: 'coins', value: 30 });
    expect(results[2]).to.deep.equal({ key: 'tutorialStep', deleted: 1 });
    expect(version).to.equal(3);
    expect(await stored(8)).to.deep.equal({ coins: 30, inventory: ['sword'] });
  });
});
