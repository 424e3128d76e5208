// The erasure's checklist walked (docs/erasure.md, "Every place a player lives"): a player put
// everywhere a player's data can live, through the public and admin HTTP APIs only (so the
// same scenario runs on one Redis and on a cluster), erased, an export taken before it imported
// again, then every key of the workspace and every installation key read by its type and
// searched for the user id and the player's data.
import { randomInt } from 'node:crypto';
import { expect } from 'chai';
import type { RunningService } from '../../src/server.js';
import type { RedisClient } from '../../src/store/redis/redis.js';
import { masters } from '../../src/store/redis/scan.js';
import { adminCall } from './admin.js';
import { freshUserId } from './erasure.js';
import { call, fetchRecorded } from './service.js';

export interface Found {
  readonly key: string;
  readonly type: string;
  /** What was found there: the user id, or a mark of the player's data. */
  readonly what: string;
}

/** The workspace a key belongs to, when its name carries a workspace's tag (players, the workspace's own keys, boards). */
const workspaceOfKey = (key: string): string | undefined => /^pds:(?:p|ws|lb):\{([^:}]+)/.exec(key)?.[1];

/** Every text a key holds (its members, fields and values, scores), read by its type. */
async function contents(redis: RedisClient, key: string): Promise<{ type: string; texts: string[] }> {
  const type = await redis.type(key);
  switch (type) {
    case 'string':
      return { type, texts: [(await redis.get(key)) ?? ''] };
    case 'hash':
      return { type, texts: Object.entries(await redis.hgetall(key)).flat() };
    case 'list':
      return { type, texts: await redis.lrange(key, 0, -1) };
    case 'set':
      return { type, texts: await redis.smembers(key) };
    case 'zset':
      return { type, texts: await redis.zrange(key, '0', '-1', 'WITHSCORES') };
    case 'stream':
      return { type, texts: (await redis.xrange(key, '-', '+')).flatMap(([id, fields]) => [id, ...fields]) };
    default:
      return { type, texts: [] };
  }
}

/**
 * Every key of the workspace and every installation key (one that carries no workspace's tag:
 * the audit trail, the erasure's records, the follow intents, the overview's stats, ...), on
 * every master, whose name or contents hold one of `marks`.
 */
export async function walkFor(redis: RedisClient, workspaceId: string, marks: Record<string, string>): Promise<{ found: Found[]; keysRead: number }> {
  const found: Found[] = [];
  let keysRead = 0;
  for (const node of masters(redis)) {
    let cursor = '0';
    do {
      const [next, page] = await node.scan(cursor, 'COUNT', 1000);
      cursor = next;
      for (const key of page) {
        const owner = workspaceOfKey(key);
        if (owner !== undefined && owner !== workspaceId) continue;
        keysRead++;
        const { type, texts } = await contents(redis, key);
        for (const [what, mark] of Object.entries(marks)) {
          if (key.includes(mark) || texts.some((text) => text.includes(mark))) found.push({ key, type, what });
        }
      }
    } while (cursor !== '0');
  }
  return { found, keysRead };
}

export interface WalkResult {
  readonly before: Found[];
  readonly after: Found[];
  readonly keysRead: number;
  readonly workspaceId: string;
}

/**
 * Puts a player everywhere (data and history, a session, messages waiting and handed out,
 * idempotent writes of one player and of many, a board and a followed board, the audit trail,
 * an export), erases it, imports the export in both modes, and walks the keyspace before and
 * after. `token` is the service's ADMIN_TOKEN.
 */
export async function putEverywhereEraseAndWalk(service: RunningService, redis: RedisClient, token: string): Promise<WalkResult> {
  const admin = async (method: string, path: string, body?: unknown) => {
    const res = await adminCall(service, method, path, { token, ...(body === undefined ? {} : { body }) });
    expect(res.status, `${method} ${path}: ${res.text}`).to.be.lessThan(300);
    return res;
  };
  const created = (await admin('POST', '/workspaces', { name: 'walk', plan: 'pro' })).body.data as { workspaceId: string; apiKey: string };
  const ws = created.workspaceId;
  const userId = freshUserId();
  const other = userId + 1;
  const tag = randomInt(1e9, 2e9);
  const marks = { userId: String(userId), data: `walk-data-${tag}`, history: `walk-old-${tag}`, message: `walk-gift-${tag}`, batch: `walk-bag-${tag}`, score: '7351.25', level: '8642.5' };
  const post = async (path: string, body: unknown, key?: string) => {
    const res = await call(service, 'POST', path, { key: created.apiKey, body, headers: key === undefined ? {} : { 'idempotency-key': `${key}-${tag}` } });
    expect(res.status, `${path}: ${res.text}`).to.equal(200);
    return res;
  };

  // Data and history: an old value, replaced; one write under an idempotency key.
  await post('/data/set', { userId, key: 'profile', value: { note: marks.history } });
  await post('/data/set', { userId, key: 'profile', value: { note: marks.data } }, 'one');
  // Boards: a score set under a key, and a board that follows a player key.
  await admin('PATCH', `/workspaces/${ws}/leaderboards/levels`, { follow: 'level' });
  await post('/leaderboards/wins/set', { userId, score: Number(marks.score) }, 'score');
  await post('/leaderboards/wins/set', { userId: other, score: 1 });
  await post('/data/set', { userId, key: 'level', value: Number(marks.level) });
  // Messages waiting (one sent under a key), and many players written under one key.
  await post('/messages', { userId, message: { gift: marks.message } }, 'gift');
  await post('/messages', { userId, message: { gift: `${marks.message}-2` } });
  await post('/data/batch', { players: [{ userId, ops: [{ op: 'set', key: 'bag', value: [marks.batch] }] }, { userId: other, ops: [{ op: 'set', key: 'bag', value: [] }] }] }, 'batch');
  // Support staff: read the player, took it off a board (the audit trail names it).
  await post('/leaderboards/losses/set', { userId, score: 3 });
  await admin('GET', `/workspaces/${ws}/players/${userId}`);
  await admin('DELETE', `/workspaces/${ws}/leaderboards/losses/entries/${userId}`);
  // The export, taken before the erasure.
  const exported = await fetchRecorded(`${service.opsUrl}/admin/v1/workspaces/${ws}/export`, 'GET', { authorization: `Bearer ${token}` }, undefined);
  expect(exported.status).to.equal(200);
  expect(exported.text).to.include(marks.data);
  // Last, a game server joins with many players under a key: a session, the messages handed out.
  const joined = await post('/sessions/acquire', { players: [userId, other], owner: 'walk-server', load: true }, 'join');
  expect(joined.text).to.include(marks.message);
  await service.playerIndex.flush();
  await new Promise((resolve) => setTimeout(resolve, 300));

  const before = (await walkFor(redis, ws, marks)).found;

  const job = (await admin('POST', '/erasures', { userId, workspaceId: ws })).body.data as { jobId: string };
  for (let i = 0; ; i++) {
    const state = ((await admin('GET', `/erasures/${job.jobId}`)).body.data as { state: string }).state;
    if (state === 'done') break;
    if (i > 300) throw new Error(`erasure ${job.jobId} not done: ${state}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  for (const mode of ['skip', 'overwrite']) {
    const imported = await fetchRecorded(`${service.opsUrl}/admin/v1/workspaces/${ws}/import?mode=${mode}`, 'POST', { authorization: `Bearer ${token}`, 'content-type': 'application/x-ndjson' }, exported.text);
    expect(imported.status, imported.text).to.equal(200);
    expect(imported.body.data.erased, mode).to.equal(1);
  }
  // Whatever an instance still held in memory about the player is written by now.
  await service.playerIndex.flush();
  await new Promise((resolve) => setTimeout(resolve, 300));
  const { found: after, keysRead } = await walkFor(redis, ws, marks);
  return { before, after, keysRead, workspaceId: ws };
}
