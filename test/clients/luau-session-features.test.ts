// The Luau session layer's features of issue 29 (messages, Ended, the deep template, save hooks,
// metadata, versions, the critical state, the mock store), run as shipped in Luau VMs against the
// real service. Each VM is one game server; the stand-in's task runs on a virtual clock.
import { expect } from 'chai';
import { createConnection, createServer, type AddressInfo, type Server, type Socket } from 'node:net';
import type { CreatedWorkspace } from '../../src/admin/operations.js';
import { call, newWorkspace, useService } from '../support/service.js';
import { startLuauVm, type LuauVm } from './luau-vm.js';
import { batchesOf, bodyOf, useLuauServers } from './luau-servers.js';

// A server: init, one store (options as JSON), and globals the tests read. GIFTS applies a gift
// message ({ coins = n }) to the player's data and marks it processed.
const SERVER = `
local baseUrl, apiKey, options = ...
PlayerData.init({ baseUrl = baseUrl, apiKey = apiKey })
STORE = PlayerData.newSessionStore(JSON.decode(options))
LOST, FAILED, ENDED, CRITICAL = {}, {}, {}, {}
STORE.SessionLost:Connect(function(session, code) table.insert(LOST, session.userId .. ":" .. code) end)
STORE.SaveFailed:Connect(function(session, message) table.insert(FAILED, message) end)
STORE.CriticalStateChanged:Connect(function(isCritical) table.insert(CRITICAL, isCritical) end)
OPENED = {}
function WATCH(session)
  session.Ended:Connect(function(reason) table.insert(ENDED, session.userId .. ":" .. reason) end)
  session:onMessage(function(message, processed)
    session.data.coins = (session.data.coins or 0) + message.coins
    processed()
  end)
  return session
end
-- A join in its own thread, as PlayerAdded runs it; let a second pass for it to open (a
-- store may gather the joins of one moment into one request).
function OPEN(id)
  task.spawn(function()
    local ok, session = pcall(STORE.open, STORE, id)
    OPENED[id] = if ok then WATCH(session) else tostring(session)
  end)
end`;

/** A TCP relay to the service that can be cut: while down, every connection is closed at once. */
async function startRelay(target: URL): Promise<{ baseUrl: string; setDown(down: boolean): void; close(): Promise<void> }> {
  let down = false;
  const sockets = new Set<Socket>();
  const server: Server = createServer((client) => {
    if (down) return client.destroy();
    const upstream = createConnection(Number(target.port), target.hostname);
    for (const s of [client, upstream]) {
      sockets.add(s);
      s.on('close', () => sockets.delete(s));
      s.on('error', () => {});
    }
    client.pipe(upstream).pipe(client);
    client.on('close', () => upstream.destroy());
    upstream.on('close', () => client.destroy());
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    baseUrl: `http://127.0.0.1:${port}/api/v1`,
    setDown(value) {
      down = value;
      if (down) for (const s of sockets) s.destroy();
    },
    close: () => {
      for (const s of sockets) s.destroy();
      return new Promise((resolve) => server.close(() => resolve()));
    },
  };
}

describe('Luau session layer: messages, Ended, template, hooks, metadata, versions, critical state (against the service)', () => {
  const t = useService();
  const servers = useLuauServers(t);
  let ws: CreatedWorkspace;
  let a: LuauVm;
  let b: LuauVm;
  beforeEach(() => {
    ({ ws, a, b } = servers);
  });

  const start = (vm: LuauVm, options: Record<string, unknown> = {}, baseUrl = t.service.baseUrl) =>
    vm.run(SERVER, baseUrl, ws.apiKey, JSON.stringify({ autoSaveSeconds: 60, ...options }));
  const { stored } = servers;
  const waitingIds = async (userId: number) => {
    const res = await call(t.service, 'GET', `/messages?userId=${userId}`, { key: ws.apiKey });
    return (res.body.data.messages as Array<{ id: string }>).map((m) => m.id);
  };
  const send = async (userId: number, message: unknown) => {
    const res = await call(t.service, 'POST', '/messages', { key: ws.apiKey, body: { userId, message } });
    expect(res.status).to.equal(200);
    return res.body.data.messageId as string;
  };

  it('a gift across two servers and a crash before save: A applies it and dies unsaved, B steals, applies it, acks it; it lands once', async () => {
    await start(a);
    await start(b);
    await a.run('OPEN(20) task.wait(1)');
    await a.run('OPENED[20].data.coins = 5 OPENED[20]:save()');

    // Sent while A holds the player: handed to A by its next save's answer, applied in memory.
    const gift = await send(20, { coins: 100 });
    await a.run('OPENED[20]:save()');
    expect(await a.run('return OPENED[20].data.coins')).to.deep.equal([105]);
    expect(await waitingIds(20), 'not acknowledged yet').to.deep.equal([gift]);
    // A "dies" here: its store is never run again until the end (no close, no save).

    // B's player joins: A's lock holds B off, then B steals after 30 s and is handed the gift again.
    await b.run('OPEN(20)');
    await b.run('task.wait(40)');
    expect(await b.run('return OPENED[20].data.coins')).to.deep.equal([105]);
    const beforeSave = b.requests.length;
    await b.run('OPENED[20]:save()');
    const [save] = batchesOf(b, beforeSave);
    expect(bodyOf(save!)).to.deep.include({ ackMessages: [gift], ops: [{ op: 'set', key: 'coins', value: 105 }] });
    expect(await stored(20)).to.deep.equal({ coins: 105 });
    expect(await waitingIds(20), 'the inbox is empty').to.deep.equal([]);

    // A wakes up: its save (with the gift, unacknowledged there) is fenced off, nothing lands twice.
    await a.run('task.wait(61)');
    expect(await a.run('return LOST[1], ENDED[1]')).to.deep.equal(['20:SESSION_LOST', '20:stolen']);
    await b.run('task.wait(61)');
    expect(await stored(20)).to.deep.equal({ coins: 105 });
    expect(await b.run('return #ERRORS, #FAILED')).to.deep.equal([0, 0]);
  });

  it('messages waiting at join are queued until onMessage is set, each once; a processed one is re-acked after a failed save', async () => {
    await start(a, { autoSaveSeconds: 30 });
    const [first, second] = [await send(21, { coins: 1 }), await send(21, { coins: 2 })];
    await a.run('S = STORE:open(21) HANDLED = {}');
    expect(await a.run('return #S._inbox')).to.deep.equal([2]);
    await a.run(`S:onMessage(function(message, processed, info)
      table.insert(HANDLED, info.id)
      S.data.coins = (S.data.coins or 0) + message.coins
      processed()
    end)`);
    expect(await a.run('return HANDLED[1], HANDLED[2], S.data.coins')).to.deep.equal([first, second, 3]);

    // The save fails (no answer, all 5 tries): the acknowledgements stay for the next one.
    a.faults.push('connect-fail', 'connect-fail', 'connect-fail', 'connect-fail', 'connect-fail');
    await a.run('pcall(S.save, S)');
    expect(await waitingIds(21)).to.deep.equal([first, second]);
    const before = a.requests.length;
    await a.run('S:save()');
    expect(bodyOf(batchesOf(a, before)[0]!).ackMessages).to.deep.equal([first, second].sort());
    expect(await waitingIds(21)).to.deep.equal([]);
    expect(await stored(21)).to.deep.equal({ coins: 3 });

    // A message sent now is handed by the next auto-save's answer (many players' batch) and
    // acknowledged by the one after; the handler never sees a message twice.
    const third = await send(21, { coins: 10 });
    await a.run('task.wait(31)');
    expect(await a.run('return #HANDLED, S.data.coins')).to.deep.equal([3, 13]);
    const beforeAck = a.requests.length;
    await a.run('task.wait(30)');
    expect(bodyOf(batchesOf(a, beforeAck)[0]!).players[0].ackMessages).to.deep.equal([third]);
    expect(await waitingIds(21)).to.deep.equal([]);
    await a.run('task.wait(30)');
    expect(await a.run('return #HANDLED')).to.deep.equal([3]);
    expect(await stored(21)).to.deep.equal({ coins: 13 });
  });

  it('sendMessage and getMessages: the direct calls, with an idempotency key sending once', async () => {
    await start(a);
    const [id, again] = await a.run(`
      local id = PlayerData.sendMessage(22, { coins = 5, from = "friend" }, { idempotencyKey = "gift-1" })
      return id, PlayerData.sendMessage(22, { coins = 5, from = "friend" }, { idempotencyKey = "gift-1" })`);
    expect(id).to.match(/^msg_/);
    expect(again).to.equal(id);
    const [count, json] = await a.run('local list = PlayerData.getMessages(22) return #list, JSON.encode(list[1].message)');
    expect(count).to.equal(1);
    expect(JSON.parse(json as string)).to.deep.equal({ coins: 5, from: 'friend' });
    const [ok, err] = await a.run('return pcall(PlayerData.sendMessage, 22, nil)');
    expect([ok, err]).to.deep.equal([false, 'PlayerData.sendMessage: INVALID_ARGUMENT: message must not be nil']);
  });

  it('Ended fires once with closed, stolen, lost and shutdown', async () => {
    await start(a, { autoSaveSeconds: 30, ttlSeconds: 60 });
    await a.run('OPEN(30) OPEN(31) OPEN(32) task.wait(1)');
    await a.run('OPENED[30]:close()');
    await call(t.service, 'POST', '/sessions/acquire', { key: ws.apiKey, body: { userId: 31, owner: 'other', steal: true } });
    await a.run('pcall(OPENED[31].save, OPENED[31])');
    // 32: no save lands for longer than the lease (60 s): the session is over, and said so.
    for (let i = 0; i < 40; i++) a.faults.push('connect-fail');
    await a.run('task.wait(90)');
    a.faults.length = 0;
    const [ended] = await a.run('table.sort(ENDED) return table.concat(ENDED, " ")');
    expect(ended).to.equal('30:closed 31:stolen 32:lost');
    expect(await a.run('return LOST[2], OPENED[32]:isActive(), STORE:find(32) == nil')).to.deep.equal(['32:SESSION_EXPIRED', false, true]);
    await a.run('game.__close() task.wait(60)');
    expect(await a.run('return #ENDED')).to.deep.equal([3]);
  });

  it('Ended: shutdown for the sessions closeAll saved', async () => {
    await start(a, { autoSaveSeconds: 30, ttlSeconds: 60 });
    await a.run('OPEN(35) OPEN(36) task.wait(1)');
    await a.run('game.__close()');
    const [ended] = await a.run('table.sort(ENDED) return table.concat(ENDED, " ")');
    expect(ended).to.equal('35:shutdown 36:shutdown');
    await a.run('task.wait(61)');
    expect(await a.run('return #ENDED, #ERRORS')).to.deep.equal([2, 0]);
  });

  it('the template is reconciled deeply, never overwriting what is there, lists filled only when missing', async () => {
    await call(t.service, 'POST', '/data/set', { key: ws.apiKey, body: { userId: 40, key: 'settings', value: { music: false, keys: { jump: 'W' } } } });
    await call(t.service, 'POST', '/data/set', { key: ws.apiKey, body: { userId: 40, key: 'inventory', value: ['axe'] } });
    const template = {
      coins: 0,
      settings: { music: true, sfx: true, keys: { jump: 'Space', crouch: 'C' } },
      inventory: ['starter'],
      quests: { daily: { done: 0 } },
    };
    await start(a, { template });
    const [json] = await a.run('return JSON.encode(STORE:open(40).data)');
    expect(JSON.parse(json as string)).to.deep.equal({
      coins: 0,
      settings: { music: false, sfx: true, keys: { jump: 'W', crouch: 'C' } },
      inventory: ['axe'],
      quests: { daily: { done: 0 } },
    });
    // The template's tables are copied, not shared between players.
    const [shared] = await a.run('local s = STORE:open(41) s.data.quests.daily.done = 5 return STORE:open(42).data.quests.daily.done');
    expect(shared).to.equal(0);
    // reconcile() after the template grew.
    const [bonus, kept] = await a.run(`
      STORE.template.settings.bonus = { on = true }
      local s = STORE:find(40) s:reconcile()
      return s.data.settings.bonus.on, s.data.settings.music`);
    expect([bonus, kept]).to.deep.equal([true, false]);
  });

  it('save hooks: before-save writes into the save, last-save on close, after-save with the new version, in order', async () => {
    await a.run(`
      PlayerData.init({ baseUrl = ..., apiKey = select(2, ...) })
      LOG = {}
      STORE = PlayerData.newSessionStore({
        beforeSave = function(session) table.insert(LOG, "before") session.data.savedAt = (session.data.savedAt or 0) + 1 end,
        lastSave = function(session) table.insert(LOG, "last") session.data.online = false end,
        afterSave = function(session, version) table.insert(LOG, "after:" .. version) end,
      })
      local s = STORE:open(50)
      s.Ended:Connect(function(reason) table.insert(LOG, "ended:" .. reason) end)
      s.data.online = true
      s:save()
      STORE:saveAll()
      s:close()`, t.service.baseUrl, ws.apiKey);
    const [log] = await a.run('return table.concat(LOG, " ")');
    expect(log).to.equal('before after:1 before after:2 last before after:3 ended:closed');
    expect(await stored(50)).to.deep.equal({ savedAt: 3, online: false });
    const res = await call(t.service, 'GET', '/data?userId=50', { key: ws.apiKey });
    expect(res.body.version).to.equal(3);
  });

  it('metadata: sessionCount counts sessions, firstSessionAt stays; lastSaved is a deep copy of the data as saved', async () => {
    await start(a);
    const [count1, first1] = await a.run('local s = STORE:open(60) s.data.bag = { gems = 1 } s:close() return s.metadata.sessionCount, s.metadata.firstSessionAt');
    const [count2, first2, json, changed] = await a.run(`
      local s = STORE:open(60)
      s.data.bag.gems = 7
      local saved = s:lastSaved()
      saved.bag.gems = 99
      return s.metadata.sessionCount, s.metadata.firstSessionAt, JSON.encode(s:lastSaved()), s.data.bag.gems`);
    expect(count1).to.equal(1);
    expect(count2).to.equal(2);
    expect(first2).to.equal(first1);
    expect(first1).to.match(/^\d{4}-\d\d-\d\dT/);
    expect(JSON.parse(json as string)).to.deep.equal({ bag: { gems: 1 } });
    expect(changed).to.equal(7);
    await a.run('STORE:find(60):save()');
    const [after] = await a.run('return JSON.encode(STORE:find(60):lastSaved())');
    expect(JSON.parse(after as string)).to.deep.equal({ bag: { gems: 7 } });
    expect(await stored(60), 'metadata is not in the player\'s keys').to.deep.equal({ bag: { gems: 7 } });
  });

  it('the critical state: entered when saves keep failing (service unreachable), left when a save lands again', async () => {
    const relay = await startRelay(new URL(t.service.baseUrl));
    try {
      await start(a, { autoSaveSeconds: 30, ttlSeconds: 300 }, relay.baseUrl);
      await a.run('OPEN(80) task.wait(1) OPENED[80].data.coins = 1');
      await a.run('task.wait(31)');
      expect(await a.run('return #CRITICAL')).to.deep.equal([0]);
      relay.setDown(true);
      await a.run('task.wait(70)'); // two failed auto-saves: not yet critical
      expect(await a.run('return #CRITICAL, STORE.isCritical')).to.deep.equal([0, false]);
      await a.run('OPENED[80].data.coins = 2 task.wait(40)'); // the third
      expect(await a.run('return #CRITICAL, CRITICAL[1], STORE.isCritical')).to.deep.equal([1, true, true]);
      relay.setDown(false);
      await a.run('task.wait(40)');
      expect(await a.run('return #CRITICAL, CRITICAL[2], STORE.isCritical')).to.deep.equal([2, false, false]);
      expect(await stored(80)).to.deep.equal({ coins: 2 });
      expect(await a.run('return #LOST, #ENDED')).to.deep.equal([0, 0]);
    } finally {
      relay.close();
    }
  });
});

describe('Luau PlayerData.init({ mock = true }): the same API over memory, no HTTP', () => {
  let vm: LuauVm;
  before(async () => {
    vm = await startLuauVm(0);
  });
  beforeEach(async () => {
    await vm.reset();
  });

  it('sessions (lock, steal, fence, metadata), messages (join, save answers, ack), versions, codes, all in memory', async () => {
    const results = await vm.run(`
      local workspace = PlayerData.init({ mock = true })
      local store = PlayerData.newSessionStore({ template = { coins = 0, bag = { gems = 0 } } })
      local out = {}
      local function add(...) for i = 1, select("#", ...) do table.insert(out, tostring((select(i, ...)))) end end
      add(workspace.plan)

      PlayerData.sendMessage(5, { coins = 7 })
      local s = store:open(5)
      local handled = 0
      -- Queued at the join, the gift is handed over as soon as the handler is set.
      s:onMessage(function(message, processed) handled += 1 s.data.coins += message.coins processed() end)
      add(s.data.coins, s.metadata.sessionCount, #PlayerData.getMessages(5))
      s:save()
      add(#PlayerData.getMessages(5), PlayerData.get(5, "coins"))

      -- Another owner is locked out, a write without the session too; a steal fences this one.
      local locked = select(2, pcall(PlayerData.acquireSession, 5, { owner = "other" }))
      add(PlayerData.errorCode(locked), PlayerData.errorCode(select(2, pcall(PlayerData.set, 5, "x", 1))))
      PlayerData.sendMessage(5, { coins = 3 })
      store:saveAll() -- its answer hands the message over; the next save acknowledges it
      store:saveAll()
      add(handled, PlayerData.get(5, "coins"), #PlayerData.getMessages(5))
      local reason = nil
      s.Ended:Connect(function(r) reason = r end)
      PlayerData.acquireSession(5, { owner = "other", steal = true })
      add(PlayerData.errorCode(select(2, pcall(s.save, s))), reason)

      -- Versions: every one kept.
      local list = PlayerData.listVersions(5)
      local old = PlayerData.getVersion(5, 1)
      add(#list, list[1].version, old.coins, PlayerData.errorCode(select(2, pcall(PlayerData.getVersion, 5, 99))))
      local again = store:open(6)
      again:close()
      add(store:open(6).metadata.sessionCount, JSON.encode(store:find(6).data.bag))
      return table.concat(out, " ")`);
    expect(results[0]).to.equal('mock 7 1 1 0 7 1 SESSION_LOCKED SESSION_LOCKED 2 10 0 SESSION_LOST stolen 2 2 7 VERSION_NOT_RETAINED 2 {"gems":0}');
    expect(vm.requests, 'no HTTP at all').to.have.length(0);
  });
});

describe('Luau PlayerData.listVersions / getVersion (against the service, a restore point a second)', () => {
  const t = useService({ HISTORY_INTERVAL_SECONDS: '1' });
  let ws: CreatedWorkspace;
  let vm: LuauVm;
  before(async () => {
    vm = await startLuauVm(0);
  });
  beforeEach(async () => {
    ws = await newWorkspace(t.redis);
    await vm.reset();
  });
  const INIT = 'local baseUrl, apiKey = ...; PlayerData.init({ baseUrl = baseUrl, apiKey = apiKey })';

  it('listVersions and getVersion read an older version from game code', async () => {
    await vm.run(INIT, t.service.baseUrl, ws.apiKey);
    await vm.run('PlayerData.set(70, "coins", 10)');
    await new Promise((resolve) => setTimeout(resolve, 1100)); // the next restore-point interval
    await vm.run('PlayerData.set(70, "coins", 20)');
    const [json, nextBefore] = await vm.run('local list, nextBefore = PlayerData.listVersions(70) return JSON.encode(list), nextBefore');
    const versions = JSON.parse(json as string) as Array<{ version: number }>;
    expect(versions.map((v) => v.version)).to.deep.equal([2, 1, 0]);
    expect(nextBefore, "one page").to.equal(null);
    const [page, pageNext] = await vm.run('local list, nextBefore = PlayerData.listVersions(70, { limit = 1 }) return #list, nextBefore');
    expect([page, pageNext]).to.deep.equal([1, 2]);
    const [values, current] = await vm.run('local values, current = PlayerData.getVersion(70, 1) return JSON.encode(values), current');
    expect(JSON.parse(values as string)).to.deep.equal({ coins: 10 });
    expect(current).to.equal(2);
    const [ok, err] = await vm.run('return pcall(PlayerData.getVersion, 70, 9)');
    expect(ok).to.equal(false);
    expect(err).to.match(/^PlayerData\.getVersion: VERSION_NOT_RETAINED: /);
  });

});
