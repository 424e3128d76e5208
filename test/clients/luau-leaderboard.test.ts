// PlayerData.leaderboard (clients/luau/src/Leaderboard.luau, required by init.luau as its child
// ModuleScript) run as shipped in a Luau VM against the real service, and the README's top-10
// SurfaceGui example run as written on a virtual clock.
import { expect } from 'chai';
import { readFileSync } from 'node:fs';
import type { CreatedWorkspace } from '../../src/admin/operations.js';
import { testOps } from '../support/admin.js';
import { call, newWorkspace, useService } from '../support/service.js';
import { startLuauVm, type LuauVm } from './luau-vm.js';

const INIT = 'local baseUrl, apiKey = ...; PlayerData.init({ baseUrl = baseUrl, apiKey = apiKey })';
const readme = readFileSync(new URL('../../clients/luau/README.md', import.meta.url), 'utf8');
const BOARD_EXAMPLE = [...readme.matchAll(/```luau\n([\s\S]*?)```/g)].map((m) => m[1]!).find((code) => code.includes('PlayerData.leaderboard('));

describe('Luau PlayerData.leaderboard (in a Luau VM, against the service)', () => {
  const t = useService();
  let ws: CreatedWorkspace;
  let vm: LuauVm;
  before(async () => {
    vm = await startLuauVm();
  });
  beforeEach(async () => {
    ws = await newWorkspace(t.redis, 'pro', 'Luau Boards');
    await vm.reset();
  });

  const init = () => vm.run(INIT, t.service.baseUrl, ws.apiKey);
  const luauError = async (body: string) => {
    const [ok, err] = await vm.run(`local ok, err = pcall(function() ${body} end) return ok, tostring(err)`);
    expect(ok, `expected an error from: ${body}`).to.equal(false);
    return err as string;
  };

  it('sets, increments, deletes; top, page and pages, rank and around', async () => {
    await init();
    const [score, all] = await vm.run(`
      local coins = PlayerData.leaderboard("coins")
      coins:set(42, 1200)
      coins:set("ann", 1200)
      local s, scores = coins:increment(7, 250)
      return s, scores.all`);
    expect([score, all]).to.deep.equal([250, 250]);
    const [top] = await vm.run('return JSON.encode(PlayerData.leaderboard("coins"):top(2))');
    expect(JSON.parse(top as string)).to.deep.equal([
      { rank: 1, userId: '42', score: 1200 },
      { rank: 2, userId: 'ann', score: 1200 },
    ]);
    const [rank, at, missing, around] = await vm.run(`
      local coins = PlayerData.leaderboard("coins")
      local rank, score = coins:rank("ann")
      local none = coins:rank("nobody")
      return rank, score, none == nil, JSON.encode(coins:around(7, 1))`);
    expect([rank, at, missing]).to.deep.equal([2, 1200, true]);
    expect(JSON.parse(around as string).map((e: { userId: string }) => e.userId)).to.deep.equal(['ann', '7']);
    const [pages, seen] = await vm.run(`
      local coins = PlayerData.leaderboard("coins")
      local count, ids = 0, {}
      for entries in coins:pages({ limit = 2 }) do
        count += 1
        for _, e in entries do table.insert(ids, e.userId) end
      end
      return count, table.concat(ids, ",")`);
    expect([pages, seen]).to.deep.equal([2, '42,ann,7']);
    const [first, cursor] = await vm.run('local e, n = PlayerData.leaderboard("coins", { order = "asc" }):page({ limit = 1 }) return e[1].userId, n ~= nil');
    expect([first, cursor]).to.deep.equal(['7', true]);
    const [deleted, again] = await vm.run('local c = PlayerData.leaderboard("coins") return c:delete(7), c:delete(7)');
    expect([deleted, again]).to.deep.equal([true, false]);
    // every write carried an Idempotency-Key
    for (const r of vm.requests.filter((r) => r.method === 'POST')) expect(r.headers['Idempotency-Key']).to.be.a('string');
  });

  it('reads the period it was made for; PERIOD_NOT_KEPT and bad arguments are coded errors', async () => {
    await testOps(t.redis).leaderboards.setPeriods(ws.workspaceId, 'wins', 'all,weekly');
    await init();
    const [scoresJson] = await vm.run('local _, scores = PlayerData.leaderboard("wins"):increment("u", 3) return JSON.encode(scores)');
    expect(JSON.parse(scoresJson as string)).to.deep.equal({ all: 3, weekly: 3 });
    const [weekly] = await vm.run('return #PlayerData.leaderboard("wins", { period = "weekly" }):top()');
    expect(weekly).to.equal(1);
    const notKept = await luauError('PlayerData.leaderboard("wins", { period = "daily" }):top()');
    expect(notKept).to.match(/^PlayerData\.leaderboard\.page: PERIOD_NOT_KEPT: HTTP 404: /);
    const [code] = await vm.run('return PlayerData.errorCode(...)', notKept);
    expect(code).to.equal('PERIOD_NOT_KEPT');
    const before = vm.requests.length;
    expect(await luauError('PlayerData.leaderboard("bad name")')).to.match(/^PlayerData\.leaderboard: INVALID_ARGUMENT: /);
    expect(await luauError('PlayerData.leaderboard("b"):set(1, 0/0)')).to.match(/INVALID_ARGUMENT: score must be a finite number/);
    expect(await luauError('PlayerData.leaderboard("b"):top(101)')).to.match(/INVALID_ARGUMENT: n must be a whole number from 1 to 100/);
    expect(await luauError('PlayerData.leaderboard("b", { period = "yearly" })')).to.match(/INVALID_ARGUMENT: period/);
    expect(vm.requests.length, 'refused before any request').to.equal(before);
  });

  it('refuses before init, with NOT_INITIALIZED', async () => {
    expect(await luauError('PlayerData.leaderboard("coins"):top()')).to.match(/^PlayerData\.leaderboard\.page: NOT_INITIALIZED: /);
    expect(vm.requests).to.have.length(0);
  });

  it("the README's top-10 SurfaceGui example: filled at once, refreshed every minute", async () => {
    expect(BOARD_EXAMPLE, 'README leaderboard example').to.be.a('string');
    await vm.run('__setSecret("pds_api_key", ...)', ws.apiKey);
    for (const [userId, score] of [[1, 30], [2, 50], [3, 40]] as const) {
      await call(t.service, 'POST', '/leaderboards/coins/set', { key: ws.apiKey, body: { userId, score } });
    }
    // The world the example draws on: workspace.Leaderboard.SurfaceGui.Rows with labels 1-10.
    await vm.run(`
      local rows = { FindFirstChild = function(self, name) return rawget(self, name) end }
      for i = 1, 10 do rows[tostring(i)] = { Text = "?" } end
      workspace = { Leaderboard = { SurfaceGui = { Rows = rows } }, WaitForChild = function(self, name) return self[name] end }
      game:GetService("Players").GetNameFromUserIdAsync = function(_, id) return "Name" .. id end`);
    await vm.run(BOARD_EXAMPLE!.split('https://pds.example.com/api/v1').join(t.service.baseUrl));
    const labels = async () => (await vm.run('local t = {} for i = 1, 4 do t[i] = workspace.Leaderboard.SurfaceGui.Rows[tostring(i)].Text end return table.concat(t, "|")'))[0];
    expect(await labels()).to.equal('1. Name2  50|2. Name3  40|3. Name1  30|');
    await call(t.service, 'POST', '/leaderboards/coins/increment', { key: ws.apiKey, body: { userId: 1, amount: 100 } });
    await vm.run('task.wait(30)');
    expect(await labels(), 'not before the minute').to.equal('1. Name2  50|2. Name3  40|3. Name1  30|');
    await vm.run('task.wait(31)');
    expect(await labels()).to.equal('1. Name1  130|2. Name2  50|3. Name3  40|');
  });
});
