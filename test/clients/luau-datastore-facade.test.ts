// PlayerData.DataStoreService (clients/luau/src/DataStoreService.luau), the drop-in for the
// platform's DataStoreService, run as shipped in Luau VMs against the real service. The game code
// is written as against the platform's API; only its require line differs (REQUIRE). Every case
// checks what the service stores over its HTTP API.
import { expect } from 'chai';
import { call, testClock, useService } from '../support/service.js';
import { platformDataStores } from './luau-datastore.js';
import { useLuauServers } from './luau-servers.js';

const INIT = `local baseUrl, apiKey = ...
require(game:GetService("ServerStorage").PlayerData).init({ baseUrl = baseUrl, apiKey = apiKey })`;
// The one line a game changes: game:GetService("DataStoreService") becomes this.
const REQUIRE = 'local DataStoreService = require(game:GetService("ServerStorage").PlayerData).DataStoreService';

// A join script and a shop as a game writes them against the platform's DataStoreService.
const GAME = `${REQUIRE}
local Players = game:GetService("Players")
local playerStore = DataStoreService:GetDataStore("PlayerSave")
local sessionData = {}
Players.PlayerAdded:Connect(function(player)
  local ok, data = pcall(function()
    return playerStore:GetAsync(tostring(player.UserId))
  end)
  if ok then
    sessionData[player.UserId] = data or { coins = 100, items = {} }
  end
end)
Players.PlayerRemoving:Connect(function(player)
  local data = sessionData[player.UserId]
  if data then
    playerStore:SetAsync(tostring(player.UserId), data, { player.UserId })
    sessionData[player.UserId] = nil
  end
end)
-- The shop: one purchase is one UpdateAsync, cancelled (nil) when the player cannot pay; it keeps
-- the key's user ids by returning them, as the platform's reference says to.
function BUY(userId, item, price)
  return playerStore:UpdateAsync(tostring(userId), function(old, keyInfo)
    if old == nil or old.coins < price then
      return nil
    end
    old.coins -= price
    table.insert(old.items, item)
    return old, keyInfo:GetUserIds()
  end)
end
function COINS(userId)
  return sessionData[userId] and sessionData[userId].coins
end`;

describe('Luau PlayerData.DataStoreService (in Luau VMs, against the service)', () => {
  // The service's clock, moved by hand past a restore-point interval (HISTORY_INTERVAL_SECONDS).
  const clock = testClock();
  const t = useService({ HISTORY_INTERVAL_SECONDS: '300' }, { clock: clock.now });
  const servers = useLuauServers(t);
  const init = (vm = servers.a) => vm.run(INIT, t.service.baseUrl, servers.ws.apiKey);
  const player = async (userId: string) => {
    const res = await call(t.service, 'GET', `/data?userId=${encodeURIComponent(userId)}`, { key: servers.ws.apiKey });
    return res.status === 404 ? undefined : { data: res.body.data, version: res.body.version };
  };
  const luauError = async (vm: typeof servers.a, body: string) => {
    const [ok, err] = await vm.run(`${REQUIRE}\nlocal ok, err = pcall(function() ${body} end) return ok, tostring(err)`);
    expect(ok, `expected an error from: ${body}`).to.equal(false);
    return err as string;
  };

  it('a join script and a shop written for the platform: GetAsync, SetAsync with user ids, UpdateAsync that buys or cancels', async () => {
    const { a } = servers;
    await init();
    await a.run(GAME);
    await a.run('game:GetService("Players").__join(7) task.wait(1)');
    expect((await a.run('return COINS(7)'))[0]).to.equal(100);
    await a.run('game:GetService("Players").__leave(7) task.wait(1)');
    const saved = await player('7');
    expect(saved?.data.PlayerSave).to.deep.equal({ coins: 100, items: [] });

    const [bought, coins] = await a.run('local v, info = BUY(7, "sword", 30) return v ~= nil, v.coins');
    expect([bought, coins]).to.deep.equal([true, 70]);
    const [cancelled] = await a.run('return BUY(7, "castle", 1000) == nil');
    expect(cancelled).to.equal(true);
    const after = await player('7');
    expect(after?.data.PlayerSave).to.deep.equal({ coins: 70, items: ['sword'] });
    expect(after?.version, 'the cancelled purchase wrote nothing').to.equal(saved!.version + 1);

    // Joining again reads what the shop wrote, with the key info of the platform's.
    await a.run('game:GetService("Players").__join(7) task.wait(1)');
    expect((await a.run('return COINS(7)'))[0]).to.equal(70);
    const [version, userIds, created, updated] = await a.run(`${REQUIRE}
      local _, info = DataStoreService:GetDataStore("PlayerSave"):GetAsync("7")
      return info.Version, table.concat(info:GetUserIds(), ","), info.CreatedTime, info.UpdatedTime`);
    expect(version).to.equal(String(after!.version));
    expect(userIds, 'UpdateAsync kept the user ids SetAsync gave').to.equal('7');
    expect(created as number).to.be.above(0).and.at.most(updated as number);
    expect(after?.data['PlayerSave#info'].u).to.deep.equal([7]);
    // A transform that does not return them clears them, as on the platform.
    const [cleared] = await a.run(`${REQUIRE}
      local store = DataStoreService:GetDataStore("PlayerSave")
      store:UpdateAsync("7", function(old) return old end)
      local _, info = store:GetAsync("7")
      return #info:GetUserIds()`);
    expect(cleared).to.equal(0);
    expect((await player('7'))?.data['PlayerSave#info']).to.not.have.property('u');
  });

  it('two servers racing UpdateAsync and IncrementAsync on one key never lose an update', async () => {
    const { a, b } = servers;
    await init(a);
    await init(b);
    // Each server reads, then yields inside the transform (virtual time) while the other writes:
    // every write of the first reader meets a newer version and is made again on a fresh read.
    const RACER = `${REQUIRE}
      local store = DataStoreService:GetDataStore("Pool")
      local name = ...
      CALLS = 0
      task.spawn(function()
        for round = 1, 3 do
          store:UpdateAsync("shared", function(old)
            CALLS += 1
            old = old or { total = 0, by = {} }
            task.wait(1)
            old.total += 1
            table.insert(old.by, name)
            return old
          end)
        end
        store:IncrementAsync("counter", 5)
        DONE = true
      end)`;
    await a.run(RACER, 'a');
    await b.run(RACER, 'b');
    for (let step = 0; step < 12; step++) {
      await a.run('task.wait(1)');
      await b.run('task.wait(1)');
    }
    const [aDone, aCalls] = await a.run('return DONE, CALLS');
    const [bDone, bCalls] = await b.run('return DONE, CALLS');
    expect([aDone, bDone]).to.deep.equal([true, true]);
    expect((aCalls as number) + (bCalls as number), 'some transforms ran again after a conflict').to.be.above(6);
    const stored = await player('shared');
    expect(stored?.data.Pool.total).to.equal(6);
    expect([...stored!.data.Pool.by].sort()).to.deep.equal(['a', 'a', 'a', 'b', 'b', 'b']);
    expect((await player('counter'))?.data.Pool).to.equal(10);
  });

  it('keys are players, names their keys (scopes as "<scope>/<name>"); RemoveAsync answers the old value; versions oldest first', async () => {
    const { a } = servers;
    await init();
    const [removed, removedVersion, gone] = await a.run(`${REQUIRE}
      local store = DataStoreService:GetDataStore("Stats")
      store:SetAsync("user:1", { level = 1 })
      DataStoreService:GetDataStore("Stats", "season2"):SetAsync("user:1", 9)
      store:IncrementAsync("Player_2", 3)
      local old, info = store:RemoveAsync("Player_2")
      return old, info.Version, store:GetAsync("Player_2") == nil`);
    expect([removed, removedVersion, gone]).to.deep.equal([3, '1', true]);
    const one = await player('user.3A1');
    expect(one?.data.Stats).to.deep.equal({ level: 1 });
    expect(one?.data['season2/Stats']).to.equal(9);
    expect((await player('Player_2'))?.data ?? {}).to.not.have.property('Stats');

    // Versions are the player's restore points: one per interval in which it was written.
    clock.advance(301_000);
    await a.run(`${REQUIRE} DataStoreService:GetDataStore("Stats"):SetAsync("user:1", { level = 2 })`);
    clock.advance(301_000);
    await a.run(`${REQUIRE} DataStoreService:GetDataStore("Stats"):SetAsync("user:1", { level = 3 })`);
    const [ascending, descending, first, page2, finished] = await a.run(`${REQUIRE}
      local store = DataStoreService:GetDataStore("Stats")
      local function versions(direction)
        local pages = store:ListVersionsAsync("user:1", direction)
        local list = {}
        for _, v in pages:GetCurrentPage() do table.insert(list, v.Version) end
        return table.concat(list, ",")
      end
      local oldest = store:ListVersionsAsync("user:1", nil, nil, nil, 1)
      local firstVersion = oldest:GetCurrentPage()[1].Version
      oldest:AdvanceToNextPageAsync()
      return versions(nil), versions(Enum.SortDirection.Descending), store:GetVersionAsync("user:1", firstVersion).level,
        oldest:GetCurrentPage()[1].Version, oldest.IsFinished`);
    expect(ascending).to.equal('2,3,4');
    expect(descending).to.equal('4,3,2');
    expect([first, page2, finished]).to.deep.equal([1, '3', false]);
    expect((await player('user.3A1'))?.version).to.equal(4);
  });

  it('a top-10 board through GetSortedAsync on an ordered data store is the service leaderboard', async () => {
    const { a } = servers;
    await init();
    const [top, pages, finished, asc, old, now] = await a.run(`${REQUIRE}
      local wins = DataStoreService:GetOrderedDataStore("Wins")
      for id = 1, 12 do
        wins:SetAsync(tostring(id), id * 10)
      end
      wins:IncrementAsync("3", 1000)
      local pages = wins:GetSortedAsync(false, 10)
      local lines = {}
      for rank, entry in pages:GetCurrentPage() do
        table.insert(lines, rank .. "=" .. entry.key .. ":" .. entry.value)
      end
      local count = 1
      while not pages.IsFinished do
        pages:AdvanceToNextPageAsync()
        count += 1
      end
      local low = wins:GetSortedAsync(true, 5, 20, 40):GetCurrentPage()
      local lowKeys = {}
      for _, entry in low do table.insert(lowKeys, entry.key) end
      local removed = wins:RemoveAsync("12")
      return table.concat(lines, " "), count, pages.IsFinished, table.concat(lowKeys, ","), removed, wins:GetAsync("12")`);
    expect(top).to.equal('1=3:1030 2=12:120 3=11:110 4=10:100 5=9:90 6=8:80 7=7:70 8=6:60 9=5:50 10=4:40');
    expect([pages, finished, asc, old, now ?? null]).to.deep.equal([2, true, '2,4', 120, null]);
    // The board as the service keeps it: key "12" removed, "3" first.
    const board = await call(t.service, 'GET', '/leaderboards/Wins?limit=2', { key: servers.ws.apiKey });
    expect(board.body.data.entries).to.deep.equal([
      { rank: 1, userId: '3', score: 1030 },
      { rank: 2, userId: '11', score: 110 },
    ]);
  });

  it('MigrateFrom copies each entry from the platform store on its first read, once; a removed entry stays removed', async () => {
    const { a } = servers;
    platformDataStores.reset();
    platformDataStores.seed('PlayerSave', '8', { coins: 40, items: ['bow'] });
    await init();
    await a.run(`${REQUIRE} DataStoreService:MigrateFrom(game:GetService("DataStoreService"))`);
    await a.run(GAME);
    await a.run('game:GetService("Players").__join(8) game:GetService("Players").__join(9) task.wait(1)');
    expect(await a.run('return COINS(8), COINS(9)')).to.deep.equal([40, 100]);
    const moved = await player('8');
    expect(moved?.data.PlayerSave).to.deep.equal({ coins: 40, items: ['bow'] });
    expect(moved?.data['PlayerSave#info'].from).to.equal(platformDataStores.version('PlayerSave', '8'));
    expect(await player('9'), 'a key the platform never had: nothing written').to.equal(undefined);
    await a.run('BUY(8, "shield", 15)');
    expect((await player('8'))?.data.PlayerSave.coins).to.equal(25);
    const [old, after] = await a.run(`${REQUIRE}
      local store = DataStoreService:GetDataStore("PlayerSave")
      local old = store:RemoveAsync("8")
      return old.coins, store:GetAsync("8") == nil`);
    expect([old, after]).to.deep.equal([25, true]);
    expect(platformDataStores.reads('PlayerSave', '8'), 'the platform was read once').to.equal(1);
    expect(platformDataStores.peek('PlayerSave', '8'), 'and never written').to.deep.equal({ coins: 40, items: ['bow'] });
  });

  it("ListKeysAsync pages a data store's keys through the players list: prefix on the key names, pages of pageSize, Cursor resumes; removed keys and other stores left out", async () => {
    const { a, b } = servers;
    await init();
    await a.run(`${REQUIRE}
      local save = DataStoreService:GetDataStore("Save")
      for _, key in { "1", "2", "10", "user:1", "user:2", "Player_9", "ü" } do
        save:SetAsync(key, { key = key })
      end
      save:RemoveAsync("2")
      DataStoreService:GetDataStore("Other"):SetAsync("3", 1)
      DataStoreService:GetDataStore("Save", "s2"):SetAsync("4", 1)`);
    // A player the game wrote over HTTP under an id the mapping never makes: GetAsync("a.b") reads player a.2Eb.
    await call(t.service, 'POST', '/data/set', { key: servers.ws.apiKey, body: { userId: 'a.b', key: 'Save', value: 1 } });
    await t.service.playerIndex.flush();
    const LIST = `${REQUIRE}
      local name, scope, prefix, pageSize, cursor = ...
      local pages = DataStoreService:GetDataStore(name, if scope == "" then nil else scope):ListKeysAsync(if prefix == "" then nil else prefix, pageSize, if cursor == "" then nil else cursor)
      local keys, sizes = {}, {}
      while true do
        local page = pages:GetCurrentPage()
        table.insert(sizes, #page)
        for _, key in page do table.insert(keys, key.KeyName) end
        if pages.IsFinished then break end
        pages:AdvanceToNextPageAsync()
      end
      return table.concat(keys, "|"), table.concat(sizes, ","), pages.Cursor`;
    const list = async (vm: typeof a, name: string, scope = '', prefix = '', pageSize = 0, cursor = '') => {
      const [keys, sizes, after] = await vm.run(LIST, name, scope, prefix, pageSize, cursor);
      return { keys: (keys as string).split('|').filter((k) => k !== '').sort(), sizes: (sizes as string).split(',').map(Number), after };
    };
    const all = await list(a, 'Save', '', '', 2);
    expect(all.keys).to.deep.equal(['1', '10', 'Player_9', 'user:1', 'user:2', 'ü']);
    expect(Math.max(...all.sizes)).to.equal(2);
    expect(all.after, 'no Cursor once finished').to.equal('');
    expect((await list(a, 'Save', '', 'user:')).keys).to.deep.equal(['user:1', 'user:2']);
    expect((await list(a, 'Save', '', '1')).keys).to.deep.equal(['1', '10']);
    expect((await list(a, 'Save', '', 'ü')).keys).to.deep.equal(['ü']);
    expect((await list(a, 'Save', '', 'x'.repeat(50))).keys).to.deep.equal([]);
    expect((await list(a, 'Save', 's2')).keys).to.deep.equal(['4']);
    expect((await list(a, 'Other')).keys).to.deep.equal(['3']);
    // The Cursor of a page resumes the listing after it, from another server too.
    const [firstPage, cursor] = await a.run(`${REQUIRE}
      local pages = DataStoreService:GetDataStore("Save"):ListKeysAsync(nil, 4)
      local names = {}
      for _, key in pages:GetCurrentPage() do table.insert(names, key.KeyName) end
      return table.concat(names, "|"), pages.Cursor`);
    expect(cursor).to.be.a('string').and.not.equal('');
    await b.run(INIT, t.service.baseUrl, servers.ws.apiKey);
    const rest = await list(b, 'Save', '', '', 4, cursor as string);
    expect([...(firstPage as string).split('|'), ...rest.keys].sort()).to.deep.equal(all.keys);

    // The mock store lists the same way, with no HTTP at all.
    await b.reset();
    await b.run('require(game:GetService("ServerStorage").PlayerData).init({ mock = true })');
    await b.run(`${REQUIRE}
      for _, key in { "7", "70", "8" } do DataStoreService:GetDataStore("Save"):SetAsync(key, 1) end
      DataStoreService:GetDataStore("Save"):RemoveAsync("8")`);
    const mocked = await list(b, 'Save', '', '7', 1);
    expect([mocked.keys, mocked.sizes]).to.deep.equal([['7', '70'], [1, 1]]);
    expect(b.requests, 'the mock sends nothing').to.have.length(0);
  });

  it('the platform limits and errors: 101/102 for keys, names up to 50, a whole number for IncrementAsync; RemoveVersionAsync is NOT_SUPPORTED', async () => {
    const { a } = servers;
    await init();
    expect(await luauError(a, 'DataStoreService:GetDataStore("S"):GetAsync("")')).to.equal("101: Key name can't be empty.");
    expect(await luauError(a, `DataStoreService:GetDataStore("S"):GetAsync(string.rep("k", 51))`)).to.equal('102: Key name exceeds the 50 character limit.');
    expect(await luauError(a, `DataStoreService:GetDataStore(string.rep("n", 51))`)).to.equal('DataStore name exceeds the 50 character limit.');
    expect(await luauError(a, 'DataStoreService:GetDataStore("S"):IncrementAsync("k", 1.5)')).to.equal('Argument 2 must be an integer');
    const removeVersion = await luauError(a, 'DataStoreService:GetDataStore("S"):RemoveVersionAsync("k", "1")');
    expect(removeVersion).to.match(/^PlayerData\.DataStoreService\.RemoveVersionAsync: NOT_SUPPORTED: /);
    expect(await luauError(a, 'DataStoreService:GetDataStore("S"):ListKeysAsync(nil, 101)')).to.equal('PageSize must be a whole number from 1 to 100, got 101');
    const [code] = await a.run(`${REQUIRE}
      local ok, err = pcall(function() DataStoreService:GetDataStore("S"):RemoveVersionAsync("k", "1") end)
      return require(game:GetService("ServerStorage").PlayerData).errorCode(err)`);
    expect(code).to.equal('NOT_SUPPORTED');
    expect(await luauError(a, 'DataStoreService:GetDataStore("S", nil, { AllScopes = true })')).to.match(/^PlayerData\.DataStoreService\.GetDataStore: NOT_SUPPORTED: /);
    expect(await player('k'), 'nothing was written').to.equal(undefined);
  });
});
