// Workspace isolation as a property: whatever sequence of requests workspace A's key sends,
// every answer is exactly what a model of A's own data predicts (so nothing about B can be
// learnt from it, error messages included), and B's data is unchanged afterwards.
import { expect } from 'chai';
import fc from 'fast-check';
import type { Redis } from 'ioredis';
import type { CreatedWorkspace } from '../../src/admin/operations.js';
import { normalizeUserId } from '../../src/domain/ids.js';
import type { RunningService } from '../../src/server.js';
import { keys } from '../../src/store/keys.js';
import { call, newWorkspace, startTestService, testRedis } from '../support/service.js';

const B_USERS = ['42', 'bob', '__proto__', 'shared1'];
const B_KEYS = ['coins', 'secret', '__proto__'];

type Model = Map<string, Map<string, unknown>>;

type Op =
  | { op: 'set'; userId: string | number; key: string; value: unknown }
  | { op: 'get'; userId: string | number; key?: string }
  | { op: 'increment'; userId: string | number; key: string; amount: number }
  | { op: 'delete'; userId: string | number; key?: string };

async function snapshot(redis: Redis, workspaceId: string): Promise<string> {
  const found: string[] = [];
  for (const pattern of [keys.playerPattern(workspaceId), `pds:ws:{${workspaceId}}*`]) {
    let cursor = '0';
    do {
      const [next, batch] = await redis.scan(cursor, 'MATCH', pattern, 'COUNT', 1000);
      cursor = next;
      found.push(...batch);
    } while (cursor !== '0');
  }
  const state: Record<string, unknown> = {};
  for (const key of found.sort()) {
    // B's own request counters, and its storage totals (written a flush interval after its writes).
    if (key.endsWith(':rl') || key.includes(':use:') || key.endsWith(':storage')) continue;
    const type = await redis.type(key);
    state[key] =
      type === 'hash'
        ? await redis.hgetall(key)
        : type === 'set'
          ? (await redis.smembers(key)).sort()
          : type === 'list'
            ? await redis.lrange(key, 0, -1)
            : type === 'zset'
              ? await redis.zrange(key, '0', '-1', 'WITHSCORES')
              : await redis.get(key);
  }
  return JSON.stringify(state);
}

describe('workspace isolation', function () {
  this.timeout(120_000);
  let service: RunningService;
  let redis: Redis;
  let a: CreatedWorkspace;
  let b: CreatedWorkspace;
  const marker = `B-SECRET-${Math.random().toString(36).slice(2)}`;

  before(async () => {
    // B's players list and its key's last use are written by each instance's flushes, a while
    // after B's writes. Both are written out below before the first snapshot: waiting for them to
    // appear was not enough (a flush between B's last two writes listed every player, and the
    // next one, between the snapshots, moved one player's and the key's times on).
    service = await startTestService({ RATE_LIMIT_PRO: '1000000' });
    redis = testRedis();
    a = await newWorkspace(redis, 'pro', 'Studio A');
    b = await newWorkspace(redis, 'pro', `Studio B ${marker}`);
    for (const user of B_USERS) {
      for (const key of B_KEYS) {
        const res = await call(service, 'POST', '/data/set', { key: b.apiKey, body: { userId: user, key, value: { marker, user } } });
        expect(res.status).to.equal(200);
      }
    }
    // A flush already under way answers the call with its own promise, which may predate B's last
    // write: flush until nothing is left.
    while (service.playerIndex.size > 0 || service.lastUsed.size > 0) {
      await Promise.all([service.playerIndex.flush(), service.lastUsed.flush()]);
    }
    expect(await redis.zcard(keys.workspacePlayers(b.workspaceId))).to.equal(B_USERS.length);
  });
  after(async () => {
    await service?.close();
    redis?.disconnect();
  });

  it("no sequence of requests with A's key reads, changes or reveals anything of B's", async () => {
    const userIds = fc.constantFrom<string | number>('42', 42, 'bob', '__proto__', 'shared1', 'alice', b.workspaceId, `${b.workspaceId}:42`, `{${b.workspaceId}:42}`, '*');
    const dataKeys = fc.constantFrom('coins', 'secret', '__proto__', 'x');
    const op: fc.Arbitrary<Op> = fc.oneof(
      fc.record({ op: fc.constant('set' as const), userId: userIds, key: dataKeys, value: fc.oneof(fc.integer(), fc.string({ maxLength: 5 })) }),
      fc.record({ op: fc.constant('get' as const), userId: userIds, key: dataKeys }, { requiredKeys: ['op', 'userId'] }),
      fc.record({ op: fc.constant('increment' as const), userId: userIds, key: dataKeys, amount: fc.integer({ min: -5, max: 5 }) }),
      fc.record({ op: fc.constant('delete' as const), userId: userIds, key: dataKeys }, { requiredKeys: ['op', 'userId'] }),
    );
    const before = await snapshot(redis, b.workspaceId);

    await fc.assert(
      fc.asyncProperty(fc.array(op, { minLength: 1, maxLength: 12 }), async (ops) => {
        // A fresh, empty workspace A for every run.
        a = await newWorkspace(redis, 'pro', 'Studio A');
        const model: Model = new Map();
        const versions = new Map<string, number>();
        for (const o of ops) {
          const res = await send(o);
          expect(res.text).to.not.include(marker);
          expect(res.text).to.not.include(b.workspaceId);
          expect(expected(model, o, versions), `${JSON.stringify(o)} -> ${res.text}`).to.deep.equal({ status: res.status, body: strip(res.body) });
        }
      }),
      { numRuns: 100 },
    );
    expect(await snapshot(redis, b.workspaceId)).to.equal(before);
    // And as B sees it through the API: every entry still there, unchanged.
    for (const user of B_USERS) {
      const all = await call(service, 'GET', `/data?userId=${user}`, { key: b.apiKey });
      expect(all.status).to.equal(200);
      expect(all.body).to.deep.equal(
        JSON.parse(`{"success":true,"data":{${B_KEYS.map((k) => `"${k}":${JSON.stringify({ marker, user })}`).join(',')}},"version":${B_KEYS.length}}`),
      );
    }
  });

  function send(o: Op) {
    if (o.op === 'get') {
      const query = `userId=${encodeURIComponent(String(o.userId))}` + (o.key === undefined ? '' : `&key=${encodeURIComponent(o.key)}`);
      return call(service, 'GET', `/data?${query}`, { key: a.apiKey });
    }
    const { op, ...body } = o;
    return call(service, 'POST', `/data/${op}`, { key: a.apiKey, body });
  }

  /** The answer a service holding only A's model would give. */
  function expected(model: Model, o: Op, versions: Map<string, number>): { status: number; body: unknown } {
    const user = normalizeUserId(o.userId);
    const bad = (field: string, part: string) => ({
      status: 400,
      body: { success: false, error: `Invalid field "${field}" in ${part}: must be a non-negative integer or a string of 1-64 characters from A-Z a-z 0-9 _ . -`, code: 'INVALID_REQUEST' },
    });
    if (user === undefined) return bad('userId', o.op === 'get' ? 'query' : 'body');
    const entries = model.get(user);
    // Every write that changes something raises the player's version; a delete of all keeps it.
    const version = versions.get(user) ?? 0;
    const bump = () => {
      versions.set(user, version + 1);
      return version + 1;
    };
    switch (o.op) {
      case 'set': {
        const map = entries ?? new Map<string, unknown>();
        map.set(o.key, o.value);
        model.set(user, map);
        return { status: 200, body: { success: true, data: { key: o.key, value: o.value }, version: bump() } };
      }
      case 'increment': {
        const map = entries ?? new Map<string, unknown>();
        const current = map.get(o.key);
        if (current !== undefined && typeof current !== 'number') {
          return { status: 409, body: { success: false, error: 'Stored value is not a number', code: 'NOT_A_NUMBER', version } };
        }
        const value = ((current as number | undefined) ?? 0) + o.amount;
        map.set(o.key, value);
        model.set(user, map);
        return { status: 200, body: { success: true, value, version: bump() } };
      }
      case 'get': {
        if (!entries || entries.size === 0) return { status: 404, body: { success: false, error: 'Player not found', code: 'PLAYER_NOT_FOUND', version } };
        if (o.key === undefined) return { status: 200, body: { success: true, data: Object.fromEntries(entries), version } };
        if (!entries.has(o.key)) return { status: 404, body: { success: false, error: 'Key not found', code: 'KEY_NOT_FOUND', version } };
        return { status: 200, body: { success: true, data: { key: o.key, value: entries.get(o.key) }, version } };
      }
      case 'delete': {
        if (o.key === undefined) {
          const deleted = entries?.size ?? 0;
          model.delete(user);
          return { status: 200, body: { success: true, data: { deleted }, version: deleted > 0 ? bump() : version } };
        }
        const deleted = entries?.delete(o.key) ? 1 : 0;
        if (entries && entries.size === 0) model.delete(user);
        return { status: 200, body: { success: true, data: { deleted }, version: deleted > 0 ? bump() : version } };
      }
    }
  }
});

/** The answer without its timestamp, which no model can predict. */
function strip(body: unknown): unknown {
  const copy = JSON.parse(JSON.stringify(body)) as { data?: { updated_at?: unknown } };
  if (copy?.data && typeof copy.data === 'object') delete copy.data.updated_at;
  return copy;
}
