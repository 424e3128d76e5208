// The Luau module's session layer (PlayerData.newSessionStore), run as shipped in Luau VMs against
// the real service. Each VM is one game server; the stand-in's task runs on a virtual clock, so
// "wait 61 s" runs the auto-save at once and nothing here depends on the machine's speed.
import { expect } from 'chai';
import type { CreatedWorkspace } from '../../src/admin/operations.js';
import { call, newWorkspace, useService } from '../support/service.js';
import { startLuauVm, type LuauVm } from './luau-vm.js';
import { acquiresOf, batchesOf, bodyOf, useLuauServers } from './luau-servers.js';

// Starts a server: init, one store (options as JSON), and globals the tests read.
const SERVER = `
local baseUrl, apiKey, options = ...
PlayerData.init({ baseUrl = baseUrl, apiKey = apiKey })
STORE = PlayerData.newSessionStore(JSON.decode(options))
LOST, FAILED = {}, {}
STORE.SessionLost:Connect(function(session, code) table.insert(LOST, session.userId .. ":" .. code) end)
STORE.SaveFailed:Connect(function(session, message) table.insert(FAILED, message) end)
-- Opens in its own thread (as a PlayerAdded handler would); OPENED[id] is the session once open.
OPENED = {}
function OPEN(id, cancel)
  task.spawn(function()
    local ok, session = pcall(STORE.open, STORE, id, { cancel = cancel })
    OPENED[id] = if ok then (session or false) else tostring(session)
  end)
end`;

describe('Luau session layer (in Luau VMs, against the service)', () => {
  const t = useService();
  const servers = useLuauServers(t);
  let ws: CreatedWorkspace;
  let a: LuauVm;
  let b: LuauVm;
  beforeEach(() => {
    ({ ws, a, b } = servers);
  });

  const start = (vm: LuauVm, options: Record<string, unknown> = {}) =>
    vm.run(SERVER, t.service.baseUrl, ws.apiKey, JSON.stringify({ autoSaveSeconds: 60, ...options }));
  const { stored, seed } = servers;

  it('open acquires and loads in one request and fills the template; each auto-save is one request with only the changed keys', async () => {
    await seed(1, 'coins', 10);
    await seed(1, 'old', 'x');
    await start(a, { template: { coins: 0, inventory: { sword: 1 } } });
    const [coins, sword, version] = await a.run('local s = STORE:open(1) return s.data.coins, s.data.inventory.sword, s.version');
    expect([coins, sword, version]).to.deep.equal([10, 1, 2]);
    expect(a.requests.filter((r) => !r.url.endsWith('/ping'))).to.have.length(1);
    await a.run('STORE:open(2) STORE:open(3)');

    const before = a.requests.length;
    await a.run(`
      local one = STORE:find(1)
      one.data.inventory.shield = 1 -- changed in place
      one.data.old = nil            -- deleted
      STORE:find(2).data.coins += 5
      task.wait(61)`);
    const saves = batchesOf(a, before);
    expect(saves).to.have.length(1);
    expect(a.requests.length - before, 'nothing else was sent').to.equal(1);
    const players = bodyOf(saves[0]!).players as Array<{ userId: string; ops: unknown[]; sessionId: string }>;
    expect(players.map((p) => p.userId).sort()).to.deep.equal(['1', '2', '3']);
    const byId = Object.fromEntries(players.map((p) => [p.userId, p]));
    expect(byId['1']!.ops).to.have.deep.members([
      { op: 'set', key: 'inventory', value: { sword: 1, shield: 1 } },
      { op: 'delete', key: 'old' },
    ]);
    expect(byId['2']!.ops).to.have.deep.members([
      { op: 'set', key: 'coins', value: 5 },
      { op: 'set', key: 'inventory', value: { sword: 1 } },
    ]);
    expect(byId['3']!.ops).to.have.length(2); // the template, never saved before
    expect(await stored(1)).to.deep.equal({ coins: 10, inventory: { sword: 1, shield: 1 } });

    // Nothing changed: the next auto-save still goes (it renews the leases), with no ops.
    const second = a.requests.length;
    await a.run('task.wait(60)');
    const renewal = batchesOf(a, second);
    expect(renewal).to.have.length(1);
    for (const p of bodyOf(renewal[0]!).players) expect(p.ops).to.deep.equal([]);
    expect(await a.run('return #LOST, #FAILED, #WARNINGS, #ERRORS')).to.deep.equal([0, 0, 0, 0]);
  });

  it('close saves and releases in one request; another server then opens the player at once, with that save', async () => {
    await start(a);
    await start(b);
    await a.run('local s = STORE:open(4) s.data.level = 3');
    const before = a.requests.length;
    const [closed, active] = await a.run('local s = STORE:find(4) return s:close(), s:isActive()');
    expect([closed, active]).to.deep.equal([true, false]);
    expect(a.requests.length - before).to.equal(1);
    const [entry] = bodyOf(a.requests.at(-1)!).players;
    expect(entry).to.deep.include({ userId: '4', release: true, ops: [{ op: 'set', key: 'level', value: 3 }] });
    expect(entry.sessionId).to.match(/^ses_/);
    const [level] = await b.run('return STORE:open(4).data.level');
    expect(level).to.equal(3);
    expect(acquiresOf(b)).to.have.length(1);
  });

  it('BindToClose saves 60 players in ONE request and releases them all', async () => {
    await start(a);
    await a.run('for id = 1000, 1059 do STORE:open(id).data.coins = id end');
    const before = a.requests.length;
    const [running] = await a.run('return game.__close()');
    expect(running).to.equal(0);
    expect(a.requests.length - before).to.equal(1);
    const players = bodyOf(a.requests.at(-1)!).players as Array<{ userId: string; release: boolean }>;
    expect(players).to.have.length(60);
    expect(players.every((p) => p.release)).to.equal(true);
    expect((await stored(1059)).coins).to.equal(1059);
    // Released: a write without a session is accepted.
    expect((await seed(1030, 'x', 1)).status).to.equal(200);
    expect(await a.run('return STORE:find(1000) == nil, #FAILED')).to.deep.equal([true, 0]);
  });

  it('BindToClose splits only past 100 players (150 -> 100 + 50)', async () => {
    await start(a);
    await a.run('for id = 2000, 2149 do STORE:open(id).data.n = id end');
    const before = a.requests.length;
    await a.run('game.__close()');
    const sizes = batchesOf(a, before).map((r) => bodyOf(r).players.length);
    expect(sizes).to.deep.equal([100, 50]);
    expect((await stored(2149)).n).to.equal(2149);
    expect((await stored(2000)).n).to.equal(2000);
  });

  it('two servers race for one player: B waits, then steals; A\'s later save is refused and reported; no update is lost or doubled', async () => {
    await seed(7, 'coins', 10);
    await start(a);
    await start(b);
    await a.run('S = STORE:open(7) S.data.coins = 20 STORE:saveAll()');
    expect((await stored(7)).coins).to.equal(20);

    // B's player joins: A holds the lock, so B waits (asking every ~5 s).
    await b.run('OPEN(7)');
    expect(await b.run('return OPENED[7] == nil')).to.deep.equal([true]);
    // A is still the owner and may save.
    await a.run('S.data.coins = 21 STORE:saveAll()');
    expect((await stored(7)).coins).to.equal(21);

    // After 30 s (at the next ask) B takes the lock over, and loads A's last save.
    await b.run('task.wait(40)');
    const acquires = acquiresOf(b).map(bodyOf);
    expect(acquires.length).to.be.at.least(5);
    expect(acquires.slice(0, -1).every((body) => body.steal === undefined)).to.equal(true);
    expect(acquires.at(-1)).to.include({ steal: true, load: true });
    expect(await b.run('return OPENED[7].data.coins')).to.deep.equal([21]);

    // A (frozen until now) saves again: refused, reported, and the session is over on A.
    const [lost, active, failed] = await a.run('S.data.coins = 999 STORE:saveAll() return LOST[1], S:isActive(), #FAILED');
    expect([lost, active, failed]).to.deep.equal(['7:SESSION_LOST', false, 0]);
    expect((await stored(7)).coins).to.equal(21);
    const beforeA = a.requests.length;
    await a.run('task.wait(61)');
    expect(batchesOf(a, beforeA), 'A never tries to write the player again').to.have.length(0);
    expect(await a.run('return select(2, pcall(S.save, S))')).to.deep.equal([
      'PlayerData.save: SESSION_NOT_OPEN: session of player 7 is lost',
    ]);

    await b.run('OPENED[7].data.coins += 5 OPENED[7]:save()');
    expect((await stored(7)).coins).to.equal(26);
  });

  it('a handoff: B waits while A holds the player, and gets it without stealing once A closes, with A\'s final save', async () => {
    await start(a);
    await start(b);
    await a.run('S = STORE:open(8) S.data.level = 1');
    await b.run('OPEN(8)');
    await a.run('S.data.level = 2 S:close()');
    await b.run('task.wait(7)');
    expect(await b.run('return OPENED[8].data.level')).to.deep.equal([2]);
    expect(acquiresOf(b).map(bodyOf).every((body) => body.steal === undefined)).to.equal(true);
  });

  it('open gives up without stealing when the player leaves while another server holds them', async () => {
    await start(a);
    await start(b);
    await a.run('S = STORE:open(9)');
    await b.run('LEFT = false OPEN(9, function() return LEFT end)');
    await b.run('task.wait(10) LEFT = true task.wait(60)');
    expect(await b.run('return OPENED[9]')).to.deep.equal([false]);
    expect(acquiresOf(b).map(bodyOf).every((body) => body.steal === undefined)).to.equal(true);
    await a.run('S.data.ok = true S:save()');
    expect((await stored(9)).ok).to.equal(true);
  });

  it('a value that cannot be stored fails that player\'s save before any request; the lease is still renewed', async () => {
    await start(a);
    await a.run('STORE:open(10).data.speed = 0/0 STORE:open(11).data.coins = 1');
    const before = a.requests.length;
    await a.run('task.wait(61)');
    const [saves] = [batchesOf(a, before)];
    expect(saves).to.have.length(1);
    const players = bodyOf(saves[0]!).players as Array<{ userId: string; ops: unknown[] }>;
    expect(players.find((p) => p.userId === '10')!.ops).to.deep.equal([]);
    expect(players.find((p) => p.userId === '11')!.ops).to.have.length(1);
    const [failed] = await a.run('return FAILED[1]');
    expect((failed as string).replace('-nan', 'nan')).to.equal(
      'PlayerData.save: INVALID_ARGUMENT: data.speed is nan: NaN and infinite numbers cannot be stored',
    );
    const err = await a.run('return select(2, pcall(function() STORE:find(10):save() end))');
    expect((err[0] as string).replace('-nan', 'nan')).to.equal(
      'PlayerData.save: INVALID_ARGUMENT: data.speed is nan: NaN and infinite numbers cannot be stored',
    );
    expect(await stored(10)).to.equal(undefined);
  });

  it('an auto-save that gets no answer at all is reported, and its changes go with the next one', async () => {
    await start(a);
    await a.run('STORE:open(13).data.coins = 1');
    for (let i = 0; i < 5; i++) a.faults.push('connect-fail');
    await a.run('task.wait(75)'); // the auto-save at 60 s backs off between its 5 tries
    const [failed, active] = await a.run('return FAILED[1], STORE:find(13):isActive()');
    expect(failed).to.match(/^PlayerData\.save: NETWORK_ERROR: player 13: request failed: HttpError: ConnectFail/);
    expect(active).to.equal(true);
    expect(await stored(13)).to.equal(undefined);
    await a.run('task.wait(60)'); // the next auto-save, 60 s after the failed one ended
    expect(await stored(13)).to.deep.equal({ coins: 1 });
  });

  it('a save whose answer is lost is retried with the same key and body, and applied once', async () => {
    await start(a);
    await a.run('S = STORE:open(12) S.data.coins = 1 S:save()');
    a.faults.push('drop-answer', 'drop-answer');
    const [version] = await a.run('S.data.coins += 1 S:save() return S.version');
    const saves = batchesOf(a).slice(-3);
    expect(new Set(saves.map((r) => r.headers['Idempotency-Key'])).size).to.equal(1);
    expect(new Set(saves.map((r) => r.body)).size).to.equal(1);
    expect(version).to.equal(2);
    expect((await stored(12)).coins).to.equal(2);
  });
});

// A service with a 64 KiB body limit (MAX_BODY_BYTES), as the store is told: the same split as at
// 1 MiB, with data small enough for luau-web's fixed heap.
describe('Luau session layer under a body limit', () => {
  const LIMIT = 64 * 1024;
  const t = useService({ MAX_BODY_BYTES: String(LIMIT) });
  let vm: LuauVm;
  before(async () => {
    vm = await startLuauVm(0);
  });

  it('BindToClose splits the save into requests under the body limit, and every player is saved', async () => {
    const ws = await newWorkspace(t.redis);
    await vm.reset();
    await vm.run(SERVER, t.service.baseUrl, ws.apiKey, JSON.stringify({ maxBodyBytes: LIMIT }));
    await vm.run('for id = 1, 5 do STORE:open(id).data.blob = string.rep("x", 20 * 1024) end');
    const before = vm.requests.length;
    await vm.run('game.__close()');
    const sent = batchesOf(vm, before);
    expect(sent.map((r) => bodyOf(r).players.length)).to.deep.equal([3, 2]);
    for (const r of sent) expect(Buffer.byteLength(r.body!)).to.be.at.most(LIMIT);
    for (let id = 1; id <= 5; id++) {
      const res = await call(t.service, 'GET', `/data?userId=${id}&key=blob`, { key: ws.apiKey });
      expect((res.body.data.value as string).length, `player ${id}`).to.equal(20 * 1024);
    }
    expect(await vm.run('return #FAILED')).to.deep.equal([0]);
  });
});

// A 2-second window: once the stand-in's clock has moved (the module waits out Retry-After), the
// test sleeps until the service's own window has really passed, so that both clocks agree.
describe('Luau session layer over the rate limit', () => {
  const t = useService({ RATE_LIMIT_FREE: '6', RATE_LIMIT_WINDOW_MS: '2000' });
  const followClock = (vm: LuauVm) => {
    let elapsed = 0;
    let synced = false;
    vm.onClock = async (seconds) => {
      elapsed += seconds;
      if (elapsed >= 0.5 && !synced) {
        synced = true;
        await new Promise((r) => setTimeout(r, 2100));
      }
    };
  };
  let vm: LuauVm;
  before(async () => {
    vm = await startLuauVm();
  });

  it('at shutdown a 429 is waited out (Retry-After) within the deadline, and the save lands', async () => {
    const ws = await newWorkspace(t.redis, 'free');
    await vm.reset();
    // Saved at once (no spread), so that the save meets the spent window.
    await vm.run(SERVER, t.service.baseUrl, ws.apiKey, JSON.stringify({ autoSaveSeconds: 600, ttlSeconds: 1800, shutdownSpreadSeconds: 0 }));
    await vm.run('STORE:open(1).data.coins = 1 STORE:open(2).data.coins = 2');
    // Spend the rest of the window.
    let spent = 0;
    while ((await call(t.service, 'GET', '/ping', { key: ws.apiKey })).status !== 429) {
      spent++;
      expect(spent, 'the free plan of 6 requests is spent').to.be.lessThan(6);
    }
    followClock(vm);
    const before = vm.requests.length;
    const [running] = await vm.run('return game.__close()');
    expect(running).to.equal(0);
    const closes = batchesOf(vm, before);
    expect(closes).to.have.length(2);
    expect(new Set(closes.map((r) => r.body)).size).to.equal(1);
    const res = await call(t.service, 'GET', '/data?userId=2', { key: ws.apiKey });
    expect(res.body.data).to.deep.equal({ coins: 2 });
  });

  it('a join that meets a 429 waits out Retry-After and opens; a direct call raises RATE_LIMITED at once', async () => {
    const ws = await newWorkspace(t.redis, 'free');
    await vm.reset();
    await vm.run(SERVER, t.service.baseUrl, ws.apiKey, JSON.stringify({ autoSaveSeconds: 600, ttlSeconds: 1800 }));
    let spent = 0;
    while ((await call(t.service, 'GET', '/ping', { key: ws.apiKey })).status !== 429) {
      spent++;
      expect(spent, 'the free plan of 6 requests is spent').to.be.lessThan(6);
    }
    const before = vm.requests.length;
    const [code] = await vm.run('return PlayerData.errorCode(select(2, pcall(PlayerData.set, 3, "a", 1)))');
    expect(code).to.equal('RATE_LIMITED');
    expect(vm.requests.length - before).to.equal(1);
    followClock(vm);
    const [opened] = await vm.run('return STORE:open(3) ~= nil');
    expect(opened).to.equal(true);
    const acquires = acquiresOf(vm, before);
    expect(acquires).to.have.length(2);
    expect(new Set(acquires.map((r) => r.headers['Idempotency-Key'])).size).to.equal(1);
  });
});

// One player, two servers, random interleavings of open (which waits and then steals), a purchase-like
// change saved at once, close and the passing of time. Every change a server was told is saved must
// be in the service's value, and nothing else: no acknowledged update lost, none counted twice.
const PROPERTY_HELPERS = `
ID, ACKED, OPENING = 1, 0, false
function P_OPEN()
  local s = OPENED[ID]
  if OPENING or (type(s) == "table" and s:isActive()) then return "skip" end
  OPENING = true
  OPENED[ID] = nil
  OPEN(ID)
  OPENING = OPENED[ID] == nil
  return "open"
end
function P_SETTLE()
  if OPENED[ID] ~= nil then OPENING = false end
end
function P_INC()
  P_SETTLE()
  local s = OPENED[ID]
  if type(s) ~= "table" or not s:isActive() then return "skip" end
  s.data.coins = (s.data.coins or 0) + 1
  local ok, err = pcall(s.save, s)
  if ok then ACKED += 1 return "acked" end
  return PlayerData.errorCode(err) or tostring(err)
end
function P_CLOSE()
  P_SETTLE()
  local s = OPENED[ID]
  if type(s) ~= "table" or not s:isActive() then return "skip" end
  return if s:close() then "closed" else "close failed"
end
function P_TICK(seconds)
  task.wait(seconds)
  P_SETTLE()
  return "tick"
end`;

function mulberry32(seed: number): () => number {
  let s = seed >>> 0;
  return () => {
    s = (s + 0x6d2b79f5) >>> 0;
    let x = s;
    x = Math.imul(x ^ (x >>> 15), x | 1);
    x ^= x + Math.imul(x ^ (x >>> 7), x | 61);
    return ((x ^ (x >>> 14)) >>> 0) / 4294967296;
  };
}

describe('Luau session layer: two servers, random interleavings', () => {
  const t = useService({ RATE_LIMIT_PRO: '1000000' });
  let a: LuauVm;
  let b: LuauVm;
  before(async () => {
    a = await startLuauVm(0);
    b = await startLuauVm(1);
  });

  const SEQUENCES = 25;
  const STEPS = 30;
  it(`never loses or doubles an acknowledged update (${SEQUENCES} seeded sequences of ${STEPS} steps)`, async () => {
    let stealsSeen = 0;
    let lostSeen = 0;
    for (let seed = 1; seed <= SEQUENCES; seed++) {
      const random = mulberry32(seed);
      const ws = await newWorkspace(t.redis);
      const servers = { A: a, B: b };
      for (const vm of [a, b]) {
        await vm.reset();
        await vm.run(SERVER, t.service.baseUrl, ws.apiKey, JSON.stringify({ autoSaveSeconds: 60 }));
        await vm.run(PROPERTY_HELPERS);
      }
      const trace: string[] = [];
      for (let step = 0; step < STEPS; step++) {
        const name = random() < 0.5 ? 'A' : 'B';
        const vm = servers[name];
        const pick = random();
        const call =
          pick < 0.25 ? 'P_OPEN()' : pick < 0.65 ? 'P_INC()' : pick < 0.75 ? 'P_CLOSE()' : `P_TICK(${1 + Math.floor(random() * 40)})`;
        const [outcome] = await vm.run(`return ${call}`);
        trace.push(`${name}.${call}=${outcome}`);
        if (outcome === 'SESSION_LOST') lostSeen++;
        const res = await call_(t, ws.apiKey);
        const [ackedA] = await a.run('return ACKED');
        const [ackedB] = await b.run('return ACKED');
        expect(res, `seed ${seed}: ${trace.join(' ')}`).to.equal((ackedA as number) + (ackedB as number));
      }
      stealsSeen += [...a.requests, ...b.requests].filter((r) => r.url.endsWith('/sessions/acquire') && bodyOf(r).steal).length;
      expect(await a.run('return #ERRORS'), `seed ${seed}`).to.deep.equal([0]);
      expect(await b.run('return #ERRORS'), `seed ${seed}`).to.deep.equal([0]);
    }
    // The sequences must reach the cases this test is about.
    expect(stealsSeen, 'steals').to.be.greaterThan(0);
    expect(lostSeen, 'saves refused as SESSION_LOST').to.be.greaterThan(0);
  });
});

async function call_(t: { service: { baseUrl: string } }, apiKey: string): Promise<number> {
  const res = await call(t.service, 'GET', '/data?userId=1&key=coins', { key: apiKey });
  return res.status === 200 ? (res.body.data.value as number) : 0;
}

// A batch's players are written one after another, and past the workspace's byte budget the
// rest are refused 429 each, unwritten (saves/player-writes.ts): the shutdown sends those again
// after the answer's Retry-After. The stand-in's clock follows the real one, for the budget's.
describe("Luau session layer past the workspace's byte budget", () => {
  let shift = 0;
  const t = useService({ WORKSPACE_BYTES_PER_SECOND: '100000', MAX_PLAYER_BYTES: '200000' }, { clock: () => Date.now() + shift });
  // A second instance on the same Redis, with the same clock and no byte budget (0 turns it off; a fast
  // one still has a burst of MAX_PLAYER_BYTES, which two 150 KB writes a few ms apart overran), writes
  // the players a test starts from and reads back what it left: each instance keeps its own
  // buckets, so the tested one's is full when the server starts, with no wait for its refill.
  const setup = useService({ WORKSPACE_BYTES_PER_SECOND: '0', MAX_PLAYER_BYTES: '200000' }, { clock: () => Date.now() + shift });
  const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));
  let vm: LuauVm;
  before(async () => {
    vm = await startLuauVm();
  });

  /**
   * A workspace whose players each hold a 150 KB blob (written through the unlimited instance: the
   * tested one's budget is full), and a server on it in a fresh VM whose clock follows the real one.
   */
  async function serverWithBigPlayers(userIds: string[], options: Record<string, unknown> = {}) {
    const ws = await newWorkspace(t.redis);
    const big = 'b'.repeat(150_000);
    for (const userId of userIds) {
      expect((await call(setup.service, 'POST', '/data/set', { key: ws.apiKey, body: { userId, key: 'blob', value: big } })).status).to.equal(200);
    }
    await vm.reset();
    vm.onClock = (seconds) => sleep(seconds * 1000);
    await vm.run(SERVER, t.service.baseUrl, ws.apiKey, JSON.stringify({ autoSaveSeconds: 600, ttlSeconds: 1800, ...options }));
    return ws;
  }

  it('a join whose load a many-player acquire refused (past the byte budget) asks again and opens', async () => {
    await serverWithBigPlayers(['11', '12']);
    const before = vm.requests.length;
    // Both join in the same moment: one acquire, whose second 150 KB load does not fit the 200 KB burst.
    const [opened, errors] = await vm.run(`
      local done, errors = {}, {}
      for _, id in { 11, 12 } do
        task.spawn(function()
          local ok, session = pcall(STORE.open, STORE, id)
          done[id] = ok and session ~= nil and #session.data.blob == 150000
          if not ok then table.insert(errors, tostring(session)) end
        end)
      end
      while done[11] == nil or done[12] == nil do task.wait(0.1) end
      return done[11] and done[12], table.concat(errors, "; ")`);
    vm.onClock = undefined;
    expect(errors).to.equal('');
    expect(opened).to.equal(true);
    const acquires = acquiresOf(vm, before).map((r) => bodyOf(r));
    expect(acquires[0]!.players, 'the first acquire holds both').to.have.length(2);
    expect(acquires.length, 'and the refused one is asked again').to.be.greaterThan(1);
    expect(await vm.run('return #FAILED, #LOST')).to.deep.equal([0, 0]);
  });

  it('the shutdown sends again the players a batch refused unwritten, after Retry-After, and every save lands', async () => {
    const ws = await serverWithBigPlayers(['1', '2'], { shutdownSpreadSeconds: 0 });
    // Each join loads 150 KB, charged: one at a time, the budget full again before each.
    await vm.run('STORE:open(1)');
    await sleep(4100);
    await vm.run('STORE:open(2)');
    await sleep(4100);
    // A new restore-point interval: each save's delete of the blob copies the 150 KB it replaces.
    shift += 300_000;
    await vm.run('for id = 1, 2 do local s = STORE:find(id) s.data.blob = nil s.data.coins = id end');
    const before = vm.requests.length;
    await vm.run('return game.__close()');
    const closes = batchesOf(vm, before);
    expect(closes.map((r) => bodyOf(r).players.map((p: { userId: string }) => p.userId))).to.deep.equal([['1', '2'], ['2']]);
    expect(await vm.run('return #FAILED, #LOST')).to.deep.equal([0, 0]);
    vm.onClock = undefined;
    for (const userId of ['1', '2']) {
      const res = await call(setup.service, 'GET', `/data?userId=${userId}`, { key: ws.apiKey });
      expect(res.body.data, userId).to.deep.equal({ coins: Number(userId) });
    }
  });
});
