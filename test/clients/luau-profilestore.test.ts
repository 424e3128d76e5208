// PlayerData.ProfileStore (clients/luau/src/ProfileStore.luau), the drop-in for ProfileStore, run
// as shipped in Luau VMs against the real service. The game code is ProfileStore's own tutorial
// (its docs/tutorial), with only the require line changed (REQUIRE). Each VM is one game server
// on a virtual clock, so ProfileStore's 30 s auto-saves run at once. Every case checks what the
// service stores over its HTTP API.
import { expect } from 'chai';
import { readFileSync } from 'node:fs';
import { call, useService } from '../support/service.js';
import { platformDataStores } from './luau-datastore.js';
import { acquiresOf, batchesOf, bodyOf, useLuauServers } from './luau-servers.js';

const INIT = `local baseUrl, apiKey = ...
require(game:GetService("ServerStorage").PlayerData).init({ baseUrl = baseUrl, apiKey = apiKey })`;
// The one line a game changes: require(ServerScriptService.ProfileStore) becomes this.
const REQUIRE = 'local ProfileStore = require(game:GetService("ServerStorage").PlayerData).ProfileStore';

// ProfileStore's tutorial server script, with a gift handler and the signals written down.
const GAME = `${REQUIRE}
local Players = game:GetService("Players")
local PROFILE_TEMPLATE = { Cash = 0, Items = {} }
local PlayerStore = ProfileStore.New("PlayerStore", PROFILE_TEMPLATE)
STORE, PS = PlayerStore, ProfileStore
local Profiles = {}
PROFILES = Profiles
LAST_SAVES, ENDED = {}, {}
local function PlayerAdded(player)
  local profile = PlayerStore:StartSessionAsync(\`{player.UserId}\`, {
    Cancel = function()
      return player.Parent ~= Players
    end,
  })
  if profile ~= nil then
    profile:AddUserId(player.UserId)
    profile:Reconcile()
    profile.OnLastSave:Connect(function(reason)
      table.insert(LAST_SAVES, player.UserId .. ":" .. reason)
    end)
    profile.OnSessionEnd:Connect(function()
      table.insert(ENDED, player.UserId)
      Profiles[player.UserId] = nil
      player:Kick(\`Profile session end - Please rejoin\`)
    end)
    if player.Parent == Players then
      Profiles[player.UserId] = profile
      profile:MessageHandler(function(message, processed)
        profile.Data.Cash += message.Cash
        processed()
      end)
    else
      profile:EndSession()
    end
  else
    player:Kick(\`Profile load fail - Please rejoin\`)
  end
end
for _, player in Players:GetPlayers() do
  task.spawn(PlayerAdded, player)
end
Players.PlayerAdded:Connect(PlayerAdded)
Players.PlayerRemoving:Connect(function(player)
  local profile = Profiles[player.UserId]
  if profile ~= nil then
    profile:EndSession()
  end
end)`;

// clients/luau/README.md's lines for a game with several stores (its one lua code block).
const README_STORES = [...readFileSync(new URL('../../clients/luau/README.md', import.meta.url), 'utf8').matchAll(/```lua\n([\s\S]*?)```/g)]
  .map((m) => m[1]!)
  .find((code) => code.includes('SetDefaultStore'));

// A game with several stores, as ProfileStore's users write one: the players' data, their data
// of a new season under a versioned name (same keys), and guilds. The one line beside the
// require: SetDefaultStore names the store whose keys are players as they are. `...` is the
// order this server creates its stores in (the test swaps it between servers).
const STORES_GAME = `${REQUIRE}
ProfileStore.SetDefaultStore("PlayerData")
local Players = game:GetService("Players")
local TEMPLATES = { PlayerData = { Cash = 0 }, PlayerData_v2 = { Level = 1 }, Guilds = { Members = {}, Bank = 0 } }
local stores = {}
for name in string.gmatch(..., "[^,]+") do
  stores[name] = ProfileStore.New(name, TEMPLATES[name])
end
local PlayerStore, SeasonStore, GuildStore = stores.PlayerData, stores.PlayerData_v2, stores.Guilds
STORES, PS = stores, ProfileStore
PROFILES, SEASONS, GUILDS, LAST_SAVES = {}, {}, {}, {}
local function PlayerAdded(player)
  local key = \`Player_{player.UserId}\`
  local cancel = function()
    return player.Parent ~= Players
  end
  local profile = PlayerStore:StartSessionAsync(key, { Cancel = cancel })
  local season = if profile ~= nil then SeasonStore:StartSessionAsync(key, { Cancel = cancel }) else nil
  if profile == nil or season == nil then
    if profile ~= nil then
      profile:EndSession()
    end
    player:Kick("Profile load fail - Please rejoin")
    return
  end
  profile:AddUserId(player.UserId)
  profile:Reconcile()
  season:Reconcile()
  profile.OnLastSave:Connect(function(reason)
    table.insert(LAST_SAVES, \`PlayerData:{player.UserId}:{reason}\`)
  end)
  profile.OnSessionEnd:Connect(function()
    PROFILES[player.UserId] = nil
    player:Kick("Profile session end - Please rejoin")
  end)
  if player.Parent == Players then
    PROFILES[player.UserId], SEASONS[player.UserId] = profile, season
  else
    profile:EndSession()
    season:EndSession()
  end
end
Players.PlayerAdded:Connect(PlayerAdded)
Players.PlayerRemoving:Connect(function(player)
  for _, profiles in { PROFILES, SEASONS } do
    local profile = profiles[player.UserId]
    if profile ~= nil then
      profiles[player.UserId] = nil
      profile:EndSession()
    end
  end
end)
-- A guild's profile, held by the server that one of its members is on.
function OPEN_GUILD(id)
  local guild = GuildStore:StartSessionAsync(\`Guild_{id}\`)
  guild:Reconcile()
  guild:MessageHandler(function(message, processed)
    guild.Data.Bank += message.Bank
    processed()
  end)
  GUILDS[id] = guild
  return guild
end`;

describe('Luau PlayerData.ProfileStore (in Luau VMs, against the service)', () => {
  const t = useService();
  const servers = useLuauServers(t);
  const start = async (vm = servers.a) => {
    await vm.run(INIT, t.service.baseUrl, servers.ws.apiKey);
    await vm.run(GAME);
  };
  const player = async (userId: string) => {
    const res = await call(t.service, 'GET', `/data?userId=${userId}`, { key: servers.ws.apiKey });
    return res.status === 404 ? undefined : res.body.data;
  };
  const messages = async (userId: string) =>
    (await call(t.service, 'GET', `/messages?userId=${userId}`, { key: servers.ws.apiKey })).body.data.messages as unknown[];

  it("the tutorial's join script: the template, auto-saves, EndSession on leave, and BindToClose saving everyone in one request", async () => {
    const { a } = servers;
    await start();
    await a.run('game:GetService("Players").__join(1) task.wait(1)');
    const [cash, active] = await a.run('local p = PROFILES[1] return p.Data.Cash, p:IsActive()');
    expect([cash, active]).to.deep.equal([0, true]);
    await a.run('PROFILES[1].Data.Cash = 50 table.insert(PROFILES[1].Data.Items, "sword") task.wait(31)');
    expect(await player('1')).to.deep.equal({ Cash: 50, Items: ['sword'], 'ProfileStore.UserIds': [1] });

    await a.run('PROFILES[1].Data.Cash = 60 game:GetService("Players").__leave(1) task.wait(1)');
    expect((await player('1')).Cash).to.equal(60);
    expect((await a.run('return table.concat(LAST_SAVES, ",")'))[0]).to.equal('1:Manual');
    expect((await a.run('return table.concat(ENDED, ",")'))[0]).to.equal('1');

    // Starting a profile this server already has raises, as ProfileStore does.
    const [twice] = await a.run('game:GetService("Players").__join(1) task.wait(1) local ok, err = pcall(STORE.StartSessionAsync, STORE, "1") return err');
    expect(twice).to.match(/\[ProfileStore\]: Profile \(STORE:PlayerStore; KEY:1\) is already loaded in this session$/);
    // Leaving and joining again at once, the final save still under way (its first try fails and
    // waits its backoff): the rejoin waits for that save, and loads it.
    a.faults.push('connect-fail');
    await a.run('PROFILES[1].Data.Cash = 60 game:GetService("Players").__leave(1) game:GetService("Players").__join(1) task.wait(5)');
    expect((await a.run('return PROFILES[1].Data.Cash'))[0]).to.equal(60);
    await a.run('game:GetService("Players").__leave(1) task.wait(1)');

    // Joining again loads what was saved; the server closing saves and releases everyone at once.
    await a.run('game:GetService("Players").__join(1) game:GetService("Players").__join(2) task.wait(1)');
    expect((await a.run('return PROFILES[1].Data.Cash, PROFILES[1].SessionLoadCount'))).to.deep.equal([60, 4]);
    const before = a.requests.length;
    await a.run('PROFILES[1].Data.Cash = 61 PROFILES[2].Data.Cash = 7 game.__close()');
    const closing = batchesOf(a, before);
    expect(closing).to.have.length(1);
    expect(bodyOf(closing[0]!).players.map((p: { release: boolean }) => p.release)).to.deep.equal([true, true]);
    expect((await player('1')).Cash).to.equal(61);
    expect((await player('2')).Cash).to.equal(7);
    expect((await a.run('return table.concat(LAST_SAVES, ",")'))[0]).to.match(/^1:Manual,1:Manual,1:Manual,(1:Shutdown,2:Shutdown|2:Shutdown,1:Shutdown)$/);
    expect((await a.run('return PS.IsClosing'))[0]).to.equal(true);
  });

  it('a gift through MessageAsync from another server is applied once, with the save that acknowledges it', async () => {
    const { a, b } = servers;
    await start(a);
    await start(b);
    await a.run('game:GetService("Players").__join(5) task.wait(1)');
    const [sent] = await b.run('return STORE:MessageAsync("5", { Cash = 25 })');
    expect(sent).to.equal(true);
    expect(await messages('5')).to.have.length(1);
    // The next auto-save's answer hands it over; the one after writes the cash and the ack together.
    await a.run('task.wait(31)');
    expect((await a.run('return PROFILES[5].Data.Cash'))[0]).to.equal(25);
    await a.run('task.wait(31)');
    expect((await player('5')).Cash).to.equal(25);
    expect(await messages('5')).to.have.length(0);
    await a.run('task.wait(31) task.wait(31)');
    expect((await player('5')).Cash, 'once').to.equal(25);
    const [bad] = await b.run('return pcall(function() STORE:MessageAsync("5", 3) end)');
    expect(bad).to.equal(false);
  });

  it('two servers racing StartSessionAsync: the holder hands over (OnLastSave "External"), losing nothing, within 60 s', async () => {
    const { a, b } = servers;
    await start(a);
    await start(b);
    await a.run('game:GetService("Players").__join(9) task.wait(1)');
    await a.run('PROFILES[9].Data.Cash = 10');
    // The player joins server B: B is refused, and asks A to end its session.
    await b.run('game:GetService("Players").__join(9) task.wait(1)');
    expect((await b.run('return PROFILES[9] == nil'))[0]).to.equal(true);
    expect(acquiresOf(b)).to.have.length.at.least(1);
    const [request] = (await messages('9')) as Array<{ message: Record<string, { owner: string; holder: string }> }>;
    expect(request, 'the hand-over request waits for the holder').to.not.equal(undefined);
    const [jobA, jobB] = [(await a.run('return game.JobId'))[0], (await b.run('return game.JobId'))[0]];
    expect(request!.message['PlayerData.ProfileStore.EndSession']).to.deep.equal({ owner: jobB, holder: jobA });
    // A changes the profile while it is still active, then its auto-save brings the request.
    await a.run('PROFILES[9].Data.Cash += 5 task.wait(31) task.wait(1)');
    expect((await a.run('return table.concat(LAST_SAVES, ","), table.concat(ENDED, ","), table.concat(KICKED, ",")'))).to.deep.equal([
      '9:External',
      '9',
      '9: Profile session end - Please rejoin',
    ]);
    expect((await player('9')).Cash).to.equal(15);
    await b.run('task.wait(10)');
    const [cash, elapsed] = await b.run('return PROFILES[9].Data.Cash, __now()');
    expect(cash, 'B has what A changed').to.equal(15);
    expect(elapsed as number).to.be.below(60);
    expect(await messages('9')).to.have.length(0);
    await b.run('PROFILES[9].Data.Cash += 1 task.wait(31)');
    expect((await player('9')).Cash).to.equal(16);
    // A request meant for another holder (left from an earlier hand-over) is dropped, not obeyed.
    const stale = { 'PlayerData.ProfileStore.EndSession': { owner: 'server-c', holder: 'server-gone' } };
    await call(t.service, 'POST', '/messages', { key: servers.ws.apiKey, body: { userId: 9, message: stale } });
    await b.run('task.wait(31) task.wait(31)');
    expect((await b.run('return PROFILES[9]:IsActive()'))[0]).to.equal(true);
    expect(await messages('9'), 'and acknowledged').to.have.length(0);
  });

  it('Steal = true takes the profile at once: the old holder ends without OnLastSave, its unsaved change fenced off', async () => {
    const { a, b } = servers;
    await start(a);
    await start(b);
    await a.run('game:GetService("Players").__join(3) task.wait(1) PROFILES[3].Data.Cash = 4 task.wait(31)');
    await a.run('PROFILES[3].Data.Cash = 1000');
    const [cash] = await b.run(`local p = STORE:StartSessionAsync("3", { Steal = true }) STOLEN = p return p.Data.Cash`);
    expect(cash).to.equal(4);
    await a.run('task.wait(31)');
    expect((await a.run('return table.concat(LAST_SAVES, ","), table.concat(ENDED, ",")'))).to.deep.equal(['', '3']);
    expect((await player('3')).Cash).to.equal(4);
    await b.run('STOLEN.Data.Cash = 5 STOLEN:EndSession() task.wait(1)');
    expect((await player('3')).Cash).to.equal(5);
  });

  it('GetAsync and VersionQuery give read-only profiles; SetAsync writes one back; RemoveAsync erases; errors as ProfileStore raises them', async () => {
    const { a } = servers;
    await start(a);
    await a.run('game:GetService("Players").__join(4) task.wait(1) PROFILES[4].Data.Cash = 8 game:GetService("Players").__leave(4) task.wait(1)');
    const [cash, missing, oldest] = await a.run(`
      local view = STORE:GetAsync("4")
      local query = STORE:VersionQuery("4")
      local first = query:NextAsync()
      return view.Data.Cash, STORE:GetAsync("404") == nil, first.Data.Cash`);
    expect([cash, missing, oldest]).to.deep.equal([8, true, 8]);
    const [saveErr] = await a.run('local ok, err = pcall(function() STORE:GetAsync("4"):Save() end) return err');
    expect(saveErr).to.match(/Can't save profile in view mode/);
    await a.run('local view = STORE:GetAsync("4") view.Data.Cash = 80 view:SetAsync()');
    expect((await player('4')).Cash).to.equal(80);
    const [removed] = await a.run('return STORE:RemoveAsync("4")');
    expect(removed).to.equal(true);
    expect(await player('4')).to.equal(undefined);
    const [tooLong] = await a.run('local ok, err = pcall(function() STORE:StartSessionAsync(string.rep("k", 51)) end) return err');
    expect(tooLong).to.match(/\[ProfileStore\]: profile_key is too long$/);
    // A second name, with no default store named: which came first may differ between servers.
    const [secondName] = await a.run('local ok, err = pcall(PS.New, "Other") return err');
    expect(secondName).to.match(/several store names \("PlayerStore", "Other"\) need ProfileStore\.SetDefaultStore\(name\) first/);
  });

  it('ProfileStore.Migrate copies a profile from the platform store of the same name on its first session, once', async () => {
    const { a } = servers;
    platformDataStores.reset();
    platformDataStores.seed('PlayerStore', '11', {
      Data: { Cash: 70, Items: ['axe'] },
      MetaData: { ProfileCreateTime: 1700000000, SessionLoadCount: 3, MetaTags: {} },
      GlobalUpdates: [0, []],
      UserIds: [11],
    });
    await start(a);
    await a.run('PS.Migrate() game:GetService("Players").__join(11) game:GetService("Players").__join(12) task.wait(1)');
    const [cash, marker, userIds, fresh] = await a.run(
      'local p = PROFILES[11] return p.Data.Cash, p.Data.migratedFrom == nil, table.concat(p.UserIds, ","), PROFILES[12].Data.Cash',
    );
    expect([cash, marker, userIds, fresh]).to.deep.equal([70, true, '11', 0]);
    const stored = await player('11');
    expect(stored).to.include({ Cash: 70 });
    expect(stored['ProfileStore.UserIds']).to.deep.equal([11]);
    expect(stored.migratedFrom.sources).to.deep.equal([{ store: 'PlayerStore', key: '11', found: true, version: platformDataStores.version('PlayerStore', '11') }]);
    await a.run('PROFILES[11].Data.Cash += 1 game:GetService("Players").__leave(11) task.wait(1) game:GetService("Players").__join(11) task.wait(1)');
    expect((await a.run('return PROFILES[11].Data.Cash'))[0]).to.equal(71);
    expect(platformDataStores.reads('PlayerStore', '11'), 'read once').to.equal(1);
    expect((await player('11')).migratedFrom, 'the marker stays with the player').to.be.an('object');

    // Still held by a server of the old version (ProfileStore's lock, updated just now): the join
    // fails and writes nothing; once the old server released it, the rejoin moves the final save.
    const held = { Data: { Cash: 1 }, MetaData: { ActiveSession: [1, 'old-job', 'x'], LastUpdate: Math.floor(Date.now() / 1000) } };
    platformDataStores.seed('PlayerStore', '13', held);
    await a.run('game:GetService("Players").__join(13) task.wait(1)');
    expect((await a.run('return KICKED[#KICKED]'))[0]).to.equal('13: Profile load fail - Please rejoin');
    expect(await player('13')).to.equal(undefined);
    platformDataStores.seed('PlayerStore', '13', { Data: { Cash: 2 }, MetaData: { ActiveSession: null, LastUpdate: held.MetaData.LastUpdate } });
    await a.run('game:GetService("Players").__join(13) task.wait(1)');
    expect((await a.run('return PROFILES[13].Data.Cash'))[0]).to.equal(2);
    expect((await player('13')).Cash).to.equal(2);
  });

  it('several stores used together, created in a different order on each server: each profile one service player, one auto-save request per server', async () => {
    const { a, b } = servers;
    await a.run(INIT, t.service.baseUrl, servers.ws.apiKey);
    await a.run(STORES_GAME, 'PlayerData,Guilds,PlayerData_v2');
    await b.run(INIT, t.service.baseUrl, servers.ws.apiKey);
    await b.run(STORES_GAME, 'PlayerData_v2,Guilds,PlayerData');
    await a.run('game:GetService("Players").__join(21) task.wait(1) OPEN_GUILD(7)');
    const before = a.requests.length;
    await a.run('PROFILES[21].Data.Cash = 5 SEASONS[21].Data.Level = 3 table.insert(GUILDS[7].Data.Members, 21) task.wait(31)');
    // The auto-save: every profile of the three stores in one request.
    const saves = batchesOf(a, before);
    expect(saves).to.have.length(1);
    const ids = bodyOf(saves[0]!).players.map((p: { userId: string }) => p.userId);
    expect(ids).to.have.members(['Player_21', 'PlayerData_v2..Player_21', 'Guilds..Guild_7']);
    // The default store's key is the player as it is; the others' "<name>..<key>".
    expect(await player('Player_21')).to.deep.equal({ Cash: 5, 'ProfileStore.UserIds': [21] });
    expect(await player('PlayerData_v2..Player_21')).to.deep.equal({ Level: 3 });
    expect(await player('Guilds..Guild_7')).to.deep.equal({ Members: [21], Bank: 0 });

    // Server B, its stores created in the other order, reads the same profiles.
    const [cash, level, members] = await b.run(`
      return STORES.PlayerData:GetAsync("Player_21").Data.Cash, STORES.PlayerData_v2:GetAsync("Player_21").Data.Level,
        table.concat(STORES.Guilds:GetAsync("Guild_7").Data.Members, ",")`);
    expect([cash, level, members]).to.deep.equal([5, 3, '21']);
    // A gift to the guild goes to the guild's player only, and is applied once by its holder.
    expect((await b.run('return STORES.Guilds:MessageAsync("Guild_7", { Bank = 100 })'))[0]).to.equal(true);
    expect(await messages('Guilds..Guild_7')).to.have.length(1);
    expect(await messages('Player_21')).to.have.length(0);
    await a.run('task.wait(31) task.wait(31)');
    expect((await player('Guilds..Guild_7')).Bank).to.equal(100);
    expect(await messages('Guilds..Guild_7')).to.have.length(0);

    // The player moves to B: A hands over the player's profiles; the guild's stays with A.
    await a.run('PROFILES[21].Data.Cash += 1');
    await b.run('game:GetService("Players").__join(21) task.wait(1)');
    await a.run('task.wait(31) task.wait(1)');
    expect((await a.run('return table.concat(LAST_SAVES, ","), GUILDS[7]:IsActive(), PROFILES[21] == nil'))).to.deep.equal([
      'PlayerData:21:External',
      true,
      true,
    ]);
    await b.run('task.wait(10)');
    const [movedCash, movedLevel, elapsed] = await b.run('return PROFILES[21].Data.Cash, SEASONS[21].Data.Level, __now()');
    expect([movedCash, movedLevel]).to.deep.equal([6, 3]);
    expect(elapsed as number).to.be.below(60);

    // Each server closes in one request: B its two profiles of player 21, A the guild's.
    const [fromB, fromA] = [b.requests.length, a.requests.length];
    await b.run('SEASONS[21].Data.Level = 4 game.__close()');
    await a.run('GUILDS[7].Data.Bank -= 10 game.__close()');
    const [closeB, closeA] = [batchesOf(b, fromB), batchesOf(a, fromA)];
    expect(closeB).to.have.length(1);
    expect(bodyOf(closeB[0]!).players.map((p: { userId: string }) => p.userId)).to.have.members(['Player_21', 'PlayerData_v2..Player_21']);
    expect(closeA).to.have.length(1);
    expect(await player('Player_21')).to.deep.equal({ Cash: 6, 'ProfileStore.UserIds': [21] });
    expect(await player('PlayerData_v2..Player_21')).to.deep.equal({ Level: 4 });
    expect(await player('Guilds..Guild_7')).to.deep.equal({ Members: [21], Bank: 90 });
  });

  it("the README's lines for several stores run as written: the default store's key is the player, another's <name>..<key>", async () => {
    const { a } = servers;
    expect(README_STORES).to.be.a('string');
    await a.run(INIT, t.service.baseUrl, servers.ws.apiKey);
    await a.run(`${README_STORES!}
      for _, started in { PlayerStore:StartSessionAsync("Player_42"), GuildStore:StartSessionAsync("Guild_7") } do
        started:Reconcile()
        started:EndSession()
      end
      task.wait(1)`);
    expect(await player('Player_42')).to.deep.equal({ Cash: 0 });
    expect(await player('Guilds..Guild_7')).to.deep.equal({ Members: [] });
  });

  it('store names: a second one raises until SetDefaultStore names the default, once and before the first profile call; every store has its Mock', async () => {
    const { a } = servers;
    await a.run(INIT, t.service.baseUrl, servers.ws.apiKey);
    // One store alone is the default; naming another default before any profile call moves it.
    const [alone, renamed, late, mocked] = await a.run(`${REQUIRE}
      local inventory = ProfileStore.New("Inventory")
      local ok, second = pcall(ProfileStore.New, "Guilds")
      ProfileStore.SetDefaultStore("PlayerData")
      local player, guilds = ProfileStore.New("PlayerData", { Cash = 0 }), ProfileStore.New("Guilds")
      local profile = inventory:StartSessionAsync("Player_1")
      profile.Data.Sword = true
      profile:EndSession()
      task.wait(1)
      local _, again = pcall(ProfileStore.SetDefaultStore, "Inventory")
      -- Each store's Mock too, in memory.
      local mocked = guilds.Mock:StartSessionAsync("Guild_2") ~= nil and player.Mock:StartSessionAsync("Player_2") ~= nil
      return ok, second, again, mocked`);
    expect(alone).to.equal(false);
    expect(renamed).to.match(/several store names \("Inventory", "Guilds"\) need ProfileStore\.SetDefaultStore\(name\) first/);
    expect(late).to.match(/SetDefaultStore\("Inventory"\) after SetDefaultStore\("PlayerData"\)/);
    expect(mocked).to.equal(true);
    expect(await player('Inventory..Player_1')).to.deep.equal({ Sword: true });
    expect(await player('Player_1')).to.equal(undefined);
  });

  it('Migrate copies each store\'s profile from the platform store of its own name; RemoveAsync and VersionQuery stay within one store; ids past 64 characters raise', async () => {
    const { a } = servers;
    platformDataStores.reset();
    platformDataStores.seed('PlayerData', 'Player_31', { Data: { Cash: 4 }, MetaData: {}, UserIds: [31] });
    platformDataStores.seed('PlayerData_v2', 'Player_31', { Data: { Level: 9 }, MetaData: {} });
    await a.run(INIT, t.service.baseUrl, servers.ws.apiKey);
    await a.run(STORES_GAME, 'Guilds,PlayerData_v2,PlayerData');
    await a.run('PS.Migrate() game:GetService("Players").__join(31) task.wait(1)');
    expect(await a.run('return PROFILES[31].Data.Cash, SEASONS[31].Data.Level')).to.deep.equal([4, 9]);
    expect((await player('Player_31')).migratedFrom.sources[0]).to.include({ store: 'PlayerData', key: 'Player_31', found: true });
    const season = await player('PlayerData_v2..Player_31');
    expect(season).to.include({ Level: 9 });
    expect(season.migratedFrom.sources[0]).to.include({ store: 'PlayerData_v2', key: 'Player_31', found: true });
    await a.run('game:GetService("Players").__leave(31) task.wait(1)');
    const [level, cash, removed, tooLong] = await a.run(`
      local level = STORES.PlayerData_v2:VersionQuery("Player_31"):NextAsync().Data.Level
      local cash = STORES.PlayerData:VersionQuery("Player_31"):NextAsync().Data.Cash
      local removed = STORES.PlayerData_v2:RemoveAsync("Player_31")
      local _, err = pcall(function()
        PS.New(string.rep("S", 40)):StartSessionAsync(string.rep("k", 25))
      end)
      return level, cash, removed, err`);
    expect([level, cash, removed]).to.deep.equal([9, 4, true]);
    expect(tooLong).to.match(/is 67 characters as a player id \("<store name>\.\.<key>"/);
    expect(await player('PlayerData_v2..Player_31')).to.equal(undefined);
    expect(await player('Player_31')).to.include({ Cash: 4 });
    expect(platformDataStores.reads('PlayerData_v2', 'Player_31')).to.equal(1);
  });

  it('the Mock keeps its profiles in memory with no HTTP at all (PlayerData.init never called), apart from the real ones', async () => {
    const { a } = servers;
    await a.run(GAME);
    const before = a.requests.length;
    expect(before).to.equal(0);
    const [cash, again, viewed, real] = await a.run(`
      local mock = STORE.Mock
      local profile = mock:StartSessionAsync("6")
      profile.Data.Cash = 12
      profile:EndSession()
      task.wait(1)
      local second = mock:StartSessionAsync("6")
      local cash = second.Data.Cash
      second:EndSession()
      task.wait(1)
      return cash, mock:MessageAsync("6", { Cash = 1 }), mock:GetAsync("6").Data.Cash, mock:RemoveAsync("6")`);
    expect([cash, again, viewed, real]).to.deep.equal([12, true, 12, true]);
    expect(a.requests.length - before, 'no request left the server').to.equal(0);
    expect(await player('6')).to.equal(undefined);
  });
});
