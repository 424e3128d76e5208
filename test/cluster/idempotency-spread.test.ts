// One busy workspace on a three-master Redis Cluster, every write with an Idempotency-Key (as
// both clients send): the commands spread over the masters with the players (issue 40 item 4),
// since a key's claim lives in a slot chosen by the key's hash, not in the workspace's own slot.
// The key reused for another request (another player, whose slot is elsewhere) is still refused,
// and the workspace's deletion finds every claim on every master.
import { expect } from 'chai';
import { Cluster, type Redis } from 'ioredis';
import type { RunningService } from '../../src/server.js';
import { keys } from '../../src/store/keys.js';
import { startCluster, type TestCluster } from '../support/cluster.js';
import { call, client, startTestService } from '../support/service.js';

const ADMIN_TOKEN = 'spread-admin-token-0123456789';
const withKey = (key: string) => ({ headers: { 'idempotency-key': key } });
const AUTOSAVES = 2;

async function commandsOf(node: Redis): Promise<number> {
  const info = await node.info('stats');
  return Number(/total_commands_processed:(\d+)/.exec(info)![1]);
}

async function countOnNode(node: Redis, pattern: string): Promise<number> {
  let cursor = '0';
  let n = 0;
  do {
    const [next, page] = await node.scan(cursor, 'MATCH', pattern, 'COUNT', 1000);
    cursor = next;
    n += page.length;
  } while (cursor !== '0');
  return n;
}

describe('one busy workspace on a Redis Cluster: idempotency claims spread over the masters', function () {
  this.timeout(90_000);
  let cluster: TestCluster;
  let service: RunningService;
  let redis: Cluster;
  let workspaceId: string;
  let api: ReturnType<typeof client>;

  before(async () => {
    cluster = await startCluster();
    service = await startTestService({
      REDIS_CLUSTER_NODES: cluster.seeds,
      ADMIN_TOKEN,
      RATE_LIMIT_PRO: '1000000',
      // The per-instance flushes into the workspace's slot (players and history lists, usage,
      // last use, storage totals) out of the measured window: one script call per flush, a
      // ZADD inside it per 500 players written since, whatever the requests; what is measured
      // here is the traffic each request makes.
      PLAYER_INDEX_FLUSH_MS: '600000',
      USAGE_FLUSH_MS: '600000',
      KEY_LAST_USED_FLUSH_MS: '600000',
      STORAGE_FLUSH_MS: '60000',
    });
    redis = cluster.client();
    const created = await call({ baseUrl: `${service.opsUrl}/admin/v1` }, 'POST', '/workspaces', {
      body: { name: 'Busy Studio', plan: 'pro' },
      headers: { authorization: `Bearer ${ADMIN_TOKEN}` },
    });
    expect(created.status, created.text).to.equal(201);
    ({ workspaceId } = created.body.data as { workspaceId: string });
    api = client(service, (created.body.data as { apiKey: string }).apiKey);
  });
  after(async () => {
    await service?.close();
    redis?.disconnect();
    await cluster?.stop();
  });

  /** `perMaster` player ids on each master, so that the players alone load the masters evenly. */
  async function balancedPlayers(perMaster: number): Promise<string[][]> {
    const slots = (await redis.cluster('SLOTS')) as unknown as Array<[number, number, [string, number]]>;
    const byPort = new Map<number, string[]>();
    for (let i = 0; [...byPort.values()].filter((l) => l.length >= perMaster).length < 3; i++) {
      const userId = `u${i}`;
      const slot = (await redis.cluster('KEYSLOT', keys.player(workspaceId, userId))) as unknown as number;
      const port = slots.find(([from, to]) => slot >= from && slot <= to)![2][1];
      const list = byPort.get(port) ?? [];
      if (list.length < perMaster) list.push(userId);
      byPort.set(port, list);
    }
    return [...byPort.values()];
  }

  // The issue's target is ±15% of the mean with players where they fall. Here the players are
  // placed evenly, so what is left is the workspace's own traffic: under 5% with the claims
  // spread (0.5-2.6% measured); 7.7-11% with every claim in the workspace's slot.
  it('spreads the commands of a session workload over every master within ±5% of their mean, players placed evenly', async () => {
    const masters = redis.nodes('master');
    expect(masters).to.have.length(3);
    const SERVERS = 12;
    const [a, b, c] = await balancedPlayers((SERVERS * 15) / 3);
    // Game servers of 15 players (5 on each master): a many-player acquire, autosaves of all its
    // players with their sessions, a purchase per player, then each player's leave; an
    // Idempotency-Key on every request, as both clients send.
    const before = await Promise.all(masters.map(commandsOf));
    await Promise.all(
      Array.from({ length: SERVERS }, async (_, s) => {
        const players = [...a!.slice(s * 5, s * 5 + 5), ...b!.slice(s * 5, s * 5 + 5), ...c!.slice(s * 5, s * 5 + 5)];
        // A player refused alone (its write turn queued past its wait on a loaded machine, 429) is
        // acquired again with the same key, as the clients do: the others are replayed.
        let acquired = await api.post('/sessions/acquire', { players, owner: `server-${s}` }, withKey(`acq-${s}`));
        for (let attempt = 1; attempt < 5 && acquired.status === 200 && acquired.body.data.players.some((p: { success: boolean }) => !p.success); attempt++) {
          await new Promise((resolve) => setTimeout(resolve, 1000 * Number(acquired.headers.get('retry-after') ?? 1)));
          acquired = await api.post('/sessions/acquire', { players, owner: `server-${s}` }, withKey(`acq-${s}`));
        }
        expect(acquired.status, acquired.text).to.equal(200);
        const sessions = (acquired.body.data.players as Array<{ sessionId: string }>).map((p) => p.sessionId);
        expect(sessions.every((id) => typeof id === 'string'), acquired.text).to.equal(true);
        for (let save = 0; save < AUTOSAVES; save++) {
          const body = { players: players.map((userId, i) => ({ userId, sessionId: sessions[i], ops: [{ op: 'increment', key: 'coins', amount: 1 }] })) };
          const saved = await api.post('/data/batch', body, withKey(`save-${s}-${save}`));
          expect(saved.status, saved.text).to.equal(200);
        }
        for (let i = 0; i < 15; i++) {
          const bought = await api.post('/data/increment', { userId: players[i], sessionId: sessions[i], key: 'gems', amount: 1 }, withKey(`buy-${s}-${i}`));
          expect(bought.status, bought.text).to.equal(200);
          const released = await api.post('/sessions/release', { userId: players[i], sessionId: sessions[i] }, withKey(`rel-${s}-${i}`));
          expect(released.status, released.text).to.equal(200);
        }
      }),
    );
    const after = await Promise.all(masters.map(commandsOf));
    const ran = after.map((n, i) => n - before[i]!);
    const mean = ran.reduce((x, y) => x + y, 0) / ran.length;
    const spread = ran.map((n) => n / mean - 1);
    expect(
      spread.every((d) => Math.abs(d) <= 0.05),
      `commands per master ${ran.join(', ')} (mean ${mean.toFixed(0)}): ${spread.map((d) => `${(d * 100).toFixed(1)}%`).join(', ')}`,
    ).to.equal(true);
    // The claims themselves are on every master.
    const claims = await Promise.all(masters.map((n) => countOnNode(n, keys.idempotencyClaimPattern(workspaceId))));
    expect(claims.every((n) => n > 0), `claims per master: ${claims.join(', ')}`).to.equal(true);
  });

  it('refuses a key reused for another player, whichever masters hold the players and the claim', async () => {
    // Players on each of the three masters.
    const byMaster = new Map<number, string>();
    for (let i = 0; byMaster.size < 3 && i < 1000; i++) {
      const port = await cluster.masterOf(keys.player(workspaceId, `r${i}`));
      if (!byMaster.has(port)) byMaster.set(port, `r${i}`);
    }
    const players = [...byMaster.values()];
    expect(players).to.have.length(3);
    for (let k = 0; k < 6; k++) {
      const key = `reuse-${k}`;
      const [first, ...others] = k % 2 === 0 ? players : [...players].reverse();
      expect((await api.post('/data/set', { userId: first, key: `k${k}`, value: k }, withKey(key))).status).to.equal(200);
      for (const other of others) {
        const reused = await api.post('/data/set', { userId: other, key: `k${k}`, value: k }, withKey(key));
        expect(reused.status, reused.text).to.equal(422);
        expect(reused.body.code).to.equal('IDEMPOTENCY_KEY_REUSED');
        expect((await api.get(`/data?userId=${other}&key=k${k}`)).status).to.equal(404);
      }
      const replay = await api.post('/data/set', { userId: first, key: `k${k}`, value: k }, withKey(key));
      expect(replay.status).to.equal(200);
      expect(replay.headers.get('idempotent-replayed')).to.equal('true');
    }
  });

  it("sends a many-player request nothing in the workspace's own slot once no legacy claim can live", async () => {
    // A workspace this release has read legacy claims of for longer than two claims' lives
    // (keys.claimsSpreadSince): its many-player requests read none (saves/idempotency.ts). What
    // is left in its slot is the per-instance traffic (leases, flushes), none of it per request.
    const created = await call({ baseUrl: `${service.opsUrl}/admin/v1` }, 'POST', '/workspaces', {
      body: { name: 'Upgraded Studio', plan: 'pro' },
      headers: { authorization: `Bearer ${ADMIN_TOKEN}` },
    });
    expect(created.status, created.text).to.equal(201);
    const ws = created.body.data as { workspaceId: string; apiKey: string };
    await redis.set(keys.claimsSpreadSince(ws.workspaceId), '1');
    const own = client(service, ws.apiKey);
    const players = Array.from({ length: 6 }, (_, i) => `m${i}`);
    // The first request of the workspace reads what an instance reads once (its key, its window).
    expect((await own.post('/data/batch', { players: players.map((userId) => ({ userId, ops: [{ op: 'set', key: 'k', value: 0 }] })) }, withKey('warm'))).status).to.equal(200);

    const port = await cluster.masterOf(keys.workspace(ws.workspaceId));
    const node = redis.nodes('master').find((n) => n.options.port === port)!;
    const monitor = await node.monitor();
    // Commands sent to the workspace's slot (not those a script runs inside), but for the rate
    // limiter's leases: an instance takes its window's budget a lease at a time, more requests
    // in each as the workspace stays busy (store/workspaces/rate-limiter.ts).
    const seen: string[] = [];
    const tag = `{${ws.workspaceId}}`;
    monitor.on('monitor', (_time: string, args: string[], source: string) => {
      if (source === 'lua' || !args.some((a) => a.includes(tag))) return;
      if (args.some((a) => a === keys.rateLimit(ws.workspaceId))) return;
      seen.push(args.slice(0, 4).join(' '));
    });
    const REQUESTS = 10;
    for (let r = 0; r < REQUESTS; r++) {
      const body = { players: players.map((userId) => ({ userId, ops: [{ op: 'increment', key: 'n', amount: 1 }] })) };
      const saved = await own.post('/data/batch', body, withKey(`upgraded-${r}`));
      expect(saved.status, saved.text).to.equal(200);
    }
    await new Promise((resolve) => setTimeout(resolve, 200));
    monitor.disconnect();
    // Without the bound: a GET of the legacy claim each request.
    expect(seen.filter((c) => c.includes(':idem:') || c.includes('claims-spread-since')), seen.join('\n')).to.deep.equal([]);
    expect(seen.length, seen.join('\n')).to.be.below(REQUESTS / 2);
  });

  it("the workspace's deletion removes its claims from every master", async () => {
    const masters = redis.nodes('master');
    expect((await Promise.all(masters.map((n) => countOnNode(n, keys.idempotencyClaimPattern(workspaceId))))).every((n) => n > 0)).to.equal(true);
    const deleted = await call({ baseUrl: `${service.opsUrl}/admin/v1` }, 'DELETE', `/workspaces/${workspaceId}`, {
      headers: { authorization: `Bearer ${ADMIN_TOKEN}` },
    });
    expect(deleted.status, deleted.text).to.be.oneOf([200, 202]);
    const left = await Promise.all(masters.map((n) => countOnNode(n, `*${workspaceId}*`)));
    expect(left).to.deep.equal([0, 0, 0]);
  });
});
