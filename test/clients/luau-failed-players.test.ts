// The Luau session layer when some players of its save fail alone (issue 40, item 1): their Redis
// node did not answer (here: a proxy holds Redis's replies to the player scripts past the command
// timeout), so the batch answers 200 with those players' 503 OUTCOME_UNKNOWN or
// STORAGE_UNAVAILABLE. The layer sends the same request again (same body, same Idempotency-Key)
// after the answer's Retry-After: the service writes only those and replays the others; no save
// is reported failed, and each player is written once.
import { expect } from 'chai';
import { Redis } from 'ioredis';
import type { CreatedWorkspace } from '../../src/admin/operations.js';
import type { RunningService } from '../../src/server.js';
import { SCRIPTS } from '../../src/store/redis/scripts.js';
import { testRedisUrl } from '../support/hooks.js';
import { startRedisProxy, type RedisProxy } from '../support/redis-proxy.js';
import { call, newWorkspace, startTestService } from '../support/service.js';
import { startLuauVm, type LuauVm } from './luau-vm.js';
import { batchesOf, bodyOf } from './luau-servers.js';

const SERVER = `
local baseUrl, apiKey = ...
PlayerData.init({ baseUrl = baseUrl, apiKey = apiKey })
STORE = PlayerData.newSessionStore({ autoSaveSeconds = 60 })
FAILED = {}
STORE.SaveFailed:Connect(function(session, message) table.insert(FAILED, message) end)
STORE.SessionLost:Connect(function(session, code) table.insert(FAILED, session.userId .. ":" .. code) end)`;

describe('Luau session layer: players of a save that failed alone are sent again, alone', function () {
  this.timeout(60_000);
  let direct: Redis;
  let proxy: RedisProxy;
  let service: RunningService;
  let ws: CreatedWorkspace;
  let vm: LuauVm;

  before(async () => {
    direct = new Redis(testRedisUrl());
    ws = await newWorkspace(direct, 'pro');
    proxy = await startRedisProxy(Number(new URL(testRedisUrl()).port));
    service = await startTestService({ REDIS_URL: proxy.url, REDIS_COMMAND_TIMEOUT_MS: '200' });
    vm = await startLuauVm(0);
    await vm.reset();
  });
  after(async () => {
    vm.onClock = undefined;
    proxy?.release();
    await service?.close();
    await proxy?.close();
    direct?.disconnect();
  });

  it('saveAll: the failed players retried with the same request and key; none reported failed, each written once', async () => {
    await vm.run(SERVER, service.baseUrl, ws.apiKey);
    await vm.run('for id = 1, 3 do local s = STORE:open(id) s.data.coins = id * 10 end');
    const before = batchesOf(vm).length;
    const write = SCRIPTS.find((s) => s.name === 'writePlayer')!;
    proxy.holdFrom(new RegExp([write.sha1, 'Apply a player.s write'].join('|')));
    // Redis answers again once the layer waits to try again.
    vm.onClock = () => proxy.release();
    await vm.run('STORE:saveAll()');
    vm.onClock = undefined;
    const batches = batchesOf(vm, before);
    expect(batches, 'the save, then the same request again').to.have.length(2);
    expect(batches[1]!.headers['idempotency-key']).to.equal(batches[0]!.headers['idempotency-key']);
    expect(bodyOf(batches[1]!)).to.deep.equal(bodyOf(batches[0]!));
    expect(await vm.run('return #FAILED')).to.deep.equal([0]);
    for (const id of [1, 2, 3]) {
      const res = await call(service, 'GET', `/data?userId=${id}`, { key: ws.apiKey });
      expect(res.body.data.coins, `player ${id}`).to.equal(id * 10);
      // One write each since the open: the retry replayed, never wrote twice.
      expect(res.body.version, `player ${id}`).to.equal(1);
    }
  });
});
