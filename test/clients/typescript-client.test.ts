// The TypeScript client (clients/typescript, imported from source) against the real service.
import { expect } from 'chai';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import * as PlayerData from '../../clients/typescript/src/index.js';
import { PlayerDataClient, PlayerDataError } from '../../clients/typescript/src/index.js';
import type { CreatedWorkspace } from '../../src/admin/operations.js';
import { keys } from '../../src/store/keys.js';
import { testRedisUrl } from '../support/hooks.js';
import { startHttpProxy } from '../support/http-proxy.js';
import { startRedisProxy } from '../support/redis-proxy.js';
import { call, newWorkspace, startTestService, testRedis, useService } from '../support/service.js';
import { playerDataError, rejection } from './rejections.js';
import { unreachableBaseUrl } from './unreachable.js';

/** Counts the requests made through fetch while `fn` runs (the requests themselves are real). */
async function countingFetch<T>(fn: () => Promise<T>): Promise<{ result: T | Error; requests: number }> {
  const realFetch = globalThis.fetch;
  let requests = 0;
  globalThis.fetch = (...args) => {
    requests += 1;
    return realFetch(...args);
  };
  try {
    return { result: await fn().catch((err: Error) => err), requests };
  } finally {
    globalThis.fetch = realFetch;
  }
}

describe('TypeScript client (against the service)', () => {
  const t = useService();
  let ws: CreatedWorkspace;
  beforeEach(async () => {
    ws = await newWorkspace(t.redis, 'pro', 'TS Studio');
  });

  const init = () => PlayerData.init({ baseUrl: t.service.baseUrl, apiKey: ws.apiKey });
  const stored = async (userId: string, key: string) =>
    (await call(t.service, 'GET', `/data?userId=${userId}&key=${encodeURIComponent(key)}`, { key: ws.apiKey })).body;

  describe('init and ping', () => {
    it('init returns the workspace; ping returns it again', async () => {
      expect(await PlayerData.init({ baseUrl: t.service.baseUrl + '/', apiKey: ws.apiKey })).to.deep.equal({
        workspaceId: ws.workspaceId,
        workspaceName: 'TS Studio',
        plan: 'pro',
      });
      expect((await PlayerData.ping()).workspaceId).to.equal(ws.workspaceId);
    });

    it('init rejects with the server message on a bad key, and every function then refuses', async () => {
      await init();
      const server = await call(t.service, 'GET', '/ping', { key: 'wrong' });
      const err = await playerDataError(PlayerData.init({ baseUrl: t.service.baseUrl, apiKey: 'wrong' }));
      expect(err).to.include({ operation: 'init', status: 401, code: 'UNAUTHORIZED', serverMessage: server.body.error });
      expect(err.message).to.equal(`PlayerData.init: HTTP 401: ${server.body.error}`);
      const calls: Array<[string, () => Promise<unknown>]> = [
        ['ping', () => PlayerData.ping()],
        ['get', () => PlayerData.get(1, 'k')],
        ['getAll', () => PlayerData.getAll(1)],
        ['set', () => PlayerData.set(1, 'k', 1)],
        ['increment', () => PlayerData.increment(1, 'k')],
        ['delete', () => PlayerData.delete(1)],
      ];
      for (const [name, fn] of calls) {
        const refused = await rejection(fn());
        expect(refused.message).to.equal(`PlayerData.${name}: call init({ baseUrl, apiKey }) first`);
      }
    });

    it('a wrong base URL and an unreachable service are errors (404, never undefined; and 0)', async () => {
      const wrong = await playerDataError(PlayerData.init({ baseUrl: t.service.baseUrl.replace('/api/v1', ''), apiKey: ws.apiKey }));
      expect(wrong).to.include({ status: 404, code: 'NOT_FOUND', serverMessage: 'No such endpoint: GET /ping', retryable: false });
      const unchecked = new PlayerDataClient({ baseUrl: t.service.baseUrl.replace('/api/v1', ''), apiKey: ws.apiKey });
      expect(await playerDataError(unchecked.get(1, 'k'))).to.include({ operation: 'get', status: 404 });
      const down = await playerDataError(PlayerData.init({ baseUrl: await unreachableBaseUrl(), apiKey: ws.apiKey }));
      expect(down).to.include({ operation: 'init', status: 0, code: 'NETWORK_ERROR', retryable: true, attempts: 3 });
      expect(down.message).to.match(/^PlayerData\.init: request failed: .*ECONNREFUSED/);
    });
  });

  describe('data', () => {
    beforeEach(init);

    const values: Array<[string, PlayerData.Value]> = [
      ['integer', 42],
      ['fraction', -3.5],
      ['large integer', 9007199254740991],
      ['string', 'hello'],
      ['empty string', ''],
      ['escapes and unicode', 'quote " backslash \\ nl \n ctl \u0001 é 😀'],
      ['true', true],
      ['false', false],
      ['array', ['sword', 'shield']],
      ['empty array', []],
      ['empty object', {}],
      ['object with nulls inside', { level: 3, nested: { list: [1, null, 'x'] }, nothing: null }],
    ];
    for (const [label, value] of values) {
      it(`round-trips ${label}`, async () => {
        await PlayerData.set(7, 'v', value);
        expect(await PlayerData.get(7, 'v')).to.deep.equal(value);
        expect((await stored('7', 'v')).data.value).to.deep.equal(value);
      });
    }

    it('get and getAll are undefined for a missing key or player', async () => {
      expect(await PlayerData.get(7, 'coins')).to.equal(undefined);
      expect(await PlayerData.getAll(7)).to.equal(undefined);
      await PlayerData.set(7, 'gems', 1);
      expect(await PlayerData.get(7, 'coins')).to.equal(undefined);
      await PlayerData.set('7', 'name', 'Ann');
      expect(await PlayerData.getAll(7)).to.deep.equal({ gems: 1, name: 'Ann' });
    });

    it('increment defaults, returns the new value, and a non-number is a typed 409', async () => {
      expect(await PlayerData.increment(5, 'coins')).to.equal(1);
      expect(await PlayerData.increment('5', 'coins', 5)).to.equal(6);
      expect(await PlayerData.increment(5, 'gems', 10, 100)).to.equal(110);
      expect(await PlayerData.increment(5, 'f', 0.1)).to.equal(0.1);
      expect(await PlayerData.increment(5, 'f', 0.2)).to.equal(0.30000000000000004);
      await PlayerData.set(5, 'name', 'Ann');
      const server = await call(t.service, 'POST', '/data/increment', { key: ws.apiKey, body: { userId: 5, key: 'name' } });
      const err = await playerDataError(PlayerData.increment(5, 'name'));
      expect(err).to.include({ operation: 'increment', status: 409, code: 'NOT_A_NUMBER', serverMessage: server.body.error });
      expect(err).to.include({ retryable: false, attempts: 1 });
    });

    it('delete removes one key or the whole player and returns the count', async () => {
      await PlayerData.set(6, 'a', 1);
      await PlayerData.set(6, 'b', 2);
      await PlayerData.set(6, 'c', 3);
      expect(await PlayerData.delete(6, 'a')).to.equal(1);
      expect(await PlayerData.delete(6, 'a')).to.equal(0);
      expect(await PlayerData.delete(6)).to.equal(2);
      expect(await PlayerData.getAll(6)).to.equal(undefined);
    });

    it('keys with URL characters and large numeric user ids reach the right entry', async () => {
      const key = 'a b&c=d/é?#%';
      await PlayerData.set(123456789012, key, 'x');
      expect(await PlayerData.get('123456789012', key)).to.equal('x');
      expect((await stored('123456789012', key)).data.value).to.equal('x');
    });

    it('refuses bad arguments before any request', async () => {
      const { requests } = await countingFetch(async () => {
        for (const bad of [-1, 1.5, '', Number.MAX_SAFE_INTEGER + 2]) {
          expect((await rejection(PlayerData.get(bad, 'k'))).message).to.match(/^PlayerData\.get: userId must be/);
        }
        const nullValue = null as unknown as PlayerData.Value;
        expect((await rejection(PlayerData.set(1, 'k', nullValue))).message).to.match(/^PlayerData\.set: value must not/);
        expect((await rejection(PlayerData.set(1, '', 1))).message).to.match(/^PlayerData\.set: key must be/);
      });
      expect(requests).to.equal(0);
    });

    it('a refused request carries the operation, status and server message', async () => {
      const key = 'k'.repeat(129);
      const server = await call(t.service, 'POST', '/data/set', { key: ws.apiKey, body: { userId: 1, key, value: 1 } });
      const err = await playerDataError(PlayerData.set(1, key, 1));
      expect(err).to.include({ operation: 'set', status: 400, code: 'INVALID_REQUEST', serverMessage: server.body.error, attempts: 1 });
      expect(err.message).to.equal(`PlayerData.set: HTTP 400: ${server.body.error}`);
    });

    it('a 500 is a retryable error, not undefined, after the retries (3 requests by default)', async () => {
      await t.redis.hset(keys.player(ws.workspaceId, '4'), 'broken', 'not an entry');
      const { result, requests } = await countingFetch(() => PlayerData.get(4, 'broken'));
      expect(result).to.be.instanceOf(PlayerDataError);
      expect(result).to.include({ operation: 'get', status: 500, code: 'INTERNAL', serverMessage: 'Internal server error' });
      expect(result).to.include({ retryable: true, attempts: 3 });
      expect(requests).to.equal(3);
    });

    it('PlayerDataClient instances talk to their own workspaces side by side', async () => {
      const other = await newWorkspace(t.redis, 'free', 'Other');
      const { client, workspace } = await PlayerDataClient.connect({ baseUrl: t.service.baseUrl, apiKey: other.apiKey });
      expect(workspace.plan).to.equal('free');
      await client.set(1, 'coins', 99);
      await PlayerData.set(1, 'coins', 1);
      expect(await client.get(1, 'coins')).to.equal(99);
      expect(await PlayerData.get(1, 'coins')).to.equal(1);
    });
  });
});

describe('TypeScript client over the rate limit', () => {
  const t = useService({ RATE_LIMIT_FREE: '3' });

  it('a 429 rejects with retryAfterSeconds after exactly one request', async () => {
    const ws = await newWorkspace(t.redis, 'free');
    const { client } = await PlayerDataClient.connect({ baseUrl: t.service.baseUrl, apiKey: ws.apiKey });
    await client.set(1, 'a', 1);
    await client.set(1, 'b', 2);
    const { result, requests } = await countingFetch(() => client.set(1, 'c', 3));
    expect(requests).to.equal(1);
    expect(result).to.be.instanceOf(PlayerDataError);
    const err = result as PlayerDataError;
    expect(err).to.include({ operation: 'set', status: 429, code: 'RATE_LIMITED', retryable: false });
    expect(err.retryAfterSeconds).to.be.within(1, 10);
    expect(err.serverMessage).to.equal(
      `Rate limit exceeded: the free plan allows 3 requests per 10 s; the window resets in ${err.retryAfterSeconds} s`,
    );
    expect(err.message).to.equal(`PlayerData.set: HTTP 429: ${err.serverMessage} (retry after ${err.retryAfterSeconds} s)`);
  });
});

describe('TypeScript client: safe saves (against the service)', () => {
  const t = useService();
  let ws: CreatedWorkspace;
  let client: PlayerDataClient;
  beforeEach(async () => {
    ws = await newWorkspace(t.redis, 'pro', 'Safe saves');
    client = new PlayerDataClient({ baseUrl: t.service.baseUrl, apiKey: ws.apiKey, retry: { baseDelayMs: 5 } });
  });
  const stored = async (userId: number) => {
    const res = await call(t.service, 'GET', `/data?userId=${userId}`, { key: ws.apiKey });
    return { status: res.status, data: res.body.data, version: res.body.version };
  };

  describe('versions', () => {
    it('every read and write answers the player version, which every change raises by one', async () => {
      expect(await client.getVersioned(1, 'coins')).to.deep.equal({ value: undefined, updatedAt: undefined, version: 0 });
      expect(await client.getAllVersioned(1)).to.deep.equal({ values: {}, exists: false, version: 0 });
      const set = await client.set(1, 'name', 'Ann');
      expect(set).to.include({ key: 'name', value: 'Ann', version: 1 });
      expect(set.updatedAt).to.be.a('string');
      expect(await client.incrementVersioned(1, 'coins', 5)).to.deep.equal({ value: 5, version: 2 });
      const entry = await client.getVersioned<number>(1, 'coins');
      expect(entry).to.include({ value: 5, version: 2 });
      expect(entry.updatedAt).to.be.a('string');
      expect(await client.getVersioned(1, 'gems')).to.deep.equal({ value: undefined, updatedAt: undefined, version: 2 });
      expect(await client.getAllVersioned(1)).to.deep.equal({ values: { name: 'Ann', coins: 5 }, exists: true, version: 2 });
      expect(await client.deleteVersioned(1, 'gems')).to.deep.equal({ deleted: 0, version: 2 });
      expect(await client.deleteVersioned(1, 'name')).to.deep.equal({ deleted: 1, version: 3 });
      expect(await client.deleteVersioned(1)).to.deep.equal({ deleted: 1, version: 4 });
      expect(await client.getAllVersioned(1)).to.deep.equal({ values: {}, exists: false, version: 4 });
      expect((await client.set(1, 'name', 'Bo')).version, 'a number once used never comes back').to.equal(5);
    });

    it('ifVersion applies set, increment and delete only at that version; else VERSION_CONFLICT with the current one', async () => {
      expect((await client.set(2, 'a', 1, { ifVersion: 0 })).version).to.equal(1);
      expect(await client.incrementVersioned(2, 'b', 2, 0, { ifVersion: 1 })).to.deep.equal({ value: 2, version: 2 });
      const stale: Array<[string, () => Promise<unknown>]> = [
        ['set', () => client.set(2, 'a', 99, { ifVersion: 1 })],
        ['increment', () => client.increment(2, 'b', 1, 0, { ifVersion: 0 })],
        ['delete', () => client.delete(2, 'a', { ifVersion: 1 })],
      ];
      for (const [operation, write] of stale) {
        const { result, requests } = await countingFetch(write);
        expect(result, operation).to.be.instanceOf(PlayerDataError);
        expect(result).to.include({ operation, status: 409, code: 'VERSION_CONFLICT', version: 2, retryable: false, attempts: 1 });
        expect(requests, 'a 409 is not retried').to.equal(1);
      }
      expect(await stored(2)).to.deep.equal({ status: 200, data: { a: 1, b: 2 }, version: 2 });
      expect(await client.deleteVersioned(2, 'a', { ifVersion: 2 })).to.deep.equal({ deleted: 1, version: 3 });
    });

    it('the module-level functions take the same options and give the same versions', async () => {
      await PlayerData.init({ baseUrl: t.service.baseUrl, apiKey: ws.apiKey });
      expect((await PlayerData.set(3, 'a', 1)).version).to.equal(1);
      expect(await PlayerData.increment(3, 'b', 1, 0, { ifVersion: 1 })).to.equal(1);
      expect(await PlayerData.incrementVersioned(3, 'b')).to.deep.equal({ value: 2, version: 3 });
      expect((await PlayerData.getVersioned(3, 'b')).version).to.equal(3);
      expect((await PlayerData.getAllVersioned(3)).values).to.deep.equal({ a: 1, b: 2 });
      expect(await PlayerData.delete(3, 'a', { ifVersion: 3 })).to.equal(1);
      expect(await PlayerData.deleteVersioned(3)).to.deep.equal({ deleted: 1, version: 5 });
      expect((await PlayerData.batch(3, [{ op: 'set', key: 'c', value: true }])).version).to.equal(6);
      const [outcome] = await PlayerData.batchPlayers([{ userId: 3, ops: [{ op: 'delete', key: 'c' }] }]);
      expect(outcome).to.deep.include({ userId: '3', success: true, version: 7 });
      const session = await PlayerData.acquireSession(3, 'server-1', { load: true });
      expect(session.values).to.deep.equal({});
      expect((await PlayerData.renewSession(3, session.sessionId)).sessionId).to.equal(session.sessionId);
      expect((await PlayerData.releaseSession(3, session.sessionId)).released).to.equal(true);
    });
  });

  describe('batch', () => {
    it('applies one player\'s ops in one request and answers one result per op, in order', async () => {
      await client.set(10, 'tutorialStep', 3);
      await client.set(10, 'coins', 100);
      const { result, requests } = await countingFetch(() =>
        client.batch(
          10,
          [
            { op: 'set', key: 'inventory', value: { sword: 1 } },
            { op: 'increment', key: 'coins', amount: 5, defaultValue: 0 },
            { op: 'delete', key: 'tutorialStep' },
          ],
          { ifVersion: 2 },
        ),
      );
      expect(requests).to.equal(1);
      const batch = result as PlayerData.BatchResult;
      expect(batch.version).to.equal(3);
      expect(batch.results).to.have.length(3);
      expect(batch.results[0]).to.include({ key: 'inventory' });
      expect(batch.results[0]).to.have.deep.property('value', { sword: 1 });
      expect((batch.results[0] as { updatedAt: string }).updatedAt).to.be.a('string');
      expect(batch.results.slice(1)).to.deep.equal([
        { key: 'coins', value: 105 },
        { key: 'tutorialStep', deleted: 1 },
      ]);
      expect(await stored(10)).to.deep.equal({ status: 200, data: { coins: 105, inventory: { sword: 1 } }, version: 3 });
    });

    it('a failing op writes nothing: NOT_A_NUMBER, an invalid op (INVALID_REQUEST naming it), a stale ifVersion', async () => {
      await client.batch(11, [
        { op: 'set', key: 'name', value: 'Ann' },
        { op: 'set', key: 'coins', value: 1 },
      ]);
      const before = await stored(11);
      const notANumber = await playerDataError(
        client.batch(11, [
          { op: 'increment', key: 'coins', amount: 1 },
          { op: 'increment', key: 'name', amount: 1 },
        ]),
      );
      expect(notANumber).to.include({ operation: 'batch', status: 409, code: 'NOT_A_NUMBER', attempts: 1 });
      const invalid = await playerDataError(
        client.batch(11, [
          { op: 'delete', key: 'name' },
          { op: 'set', key: 'k'.repeat(129), value: 1 },
        ]),
      );
      expect(invalid).to.include({ status: 400, code: 'INVALID_REQUEST' });
      expect(invalid.serverMessage).to.include('ops[1]');
      const twice = await playerDataError(
        client.batch(11, [
          { op: 'delete', key: 'name' },
          { op: 'set', key: 'name', value: 'Bo' },
        ]),
      );
      expect(twice).to.include({ status: 400, code: 'INVALID_REQUEST' });
      const conflict = await playerDataError(client.batch(11, [{ op: 'delete', key: 'name' }], { ifVersion: 0 }));
      expect(conflict).to.include({ status: 409, code: 'VERSION_CONFLICT', version: 1 });
      expect(await stored(11)).to.deep.equal(before);
    });

    it('refuses ops the service would refuse before any request', async () => {
      const { requests } = await countingFetch(async () => {
        const bad: Array<[unknown, RegExp]> = [
          [[{ op: 'rename', key: 'a' }], /ops\[0\]\.op must be/],
          [[{ op: 'set', key: 'a', value: null }], /ops\[0\]\.value must not/],
          [[{ op: 'delete', key: 'a' }, { op: 'increment', key: 'b', amount: Number.NaN }], /ops\[1\]\.amount must be a finite number/],
          [[{ op: 'set', key: '', value: 1 }], /ops\[0\]\.key must be/],
        ];
        for (const [ops, message] of bad) {
          expect((await rejection(client.batch(1, ops as PlayerData.BatchOp[]))).message).to.match(message);
        }
        expect((await rejection(client.set(1, 'k', 1, { ifVersion: -1 }))).message).to.match(/ifVersion must be/);
        expect((await rejection(client.increment(1, 'k', Infinity))).message).to.match(/amount must be a finite number/);
        expect((await rejection(client.set(1, 'k', Number.NaN))).message).to.match(/value must be a finite number/);
        expect((await rejection(client.set(1, 'k', 1, { idempotencyKey: 'é' }))).message).to.match(/idempotencyKey must be/);
      });
      expect(requests).to.equal(0);
    });

    it('saves many players in one request, each on its own: mixed outcomes carry their codes', async () => {
      await client.set(21, 'coins', 1);
      const held = await client.acquireSession(22, 'server-a');
      const { result, requests } = await countingFetch(() =>
        client.batchPlayers([
          { userId: 20, ops: [{ op: 'set', key: 'level', value: 2 }] },
          { userId: 21, ops: [{ op: 'increment', key: 'coins', amount: 1 }], ifVersion: 0 },
          { userId: 22, ops: [{ op: 'set', key: 'level', value: 9 }], sessionId: 'ses_not_the_holder' },
          { userId: 23, ops: [{ op: 'set', key: 'level', value: 3 }] },
        ]),
      );
      expect(requests).to.equal(1);
      const outcomes = result as PlayerData.PlayerBatchOutcome[];
      expect(outcomes.map((o) => [o.userId, o.success])).to.deep.equal([
        ['20', true],
        ['21', false],
        ['22', false],
        ['23', true],
      ]);
      const [ok, conflict, lost] = outcomes;
      expect(ok).to.deep.include({ version: 1 });
      expect(ok!.success && ok!.results[0]).to.include({ key: 'level', value: 2 });
      const conflictError = !conflict!.success && conflict!.error;
      expect(conflictError).to.be.instanceOf(PlayerDataError);
      expect(conflictError).to.include({ operation: 'batchPlayers', status: 409, code: 'VERSION_CONFLICT', version: 1 });
      const lostError = !lost!.success && lost!.error;
      expect(lostError).to.include({ status: 409, code: 'SESSION_LOST' });
      expect((await stored(21)).data).to.deep.equal({ coins: 1 });
      expect((await stored(22)).status).to.equal(404);
      expect((await stored(23)).data).to.deep.equal({ level: 3 });
      await client.releaseSession(22, held.sessionId);
    });
  });

  describe('sessions', () => {
    it('acquire with load answers the data in one request; a second server is SESSION_LOCKED with the holder', async () => {
      await client.set(30, 'level', 4);
      const { result, requests } = await countingFetch(() => client.acquireSession(30, 'server-a', { load: true, ttlSeconds: 60 }));
      expect(requests).to.equal(1);
      const a = result as PlayerData.LoadedSession;
      expect(a).to.include({ userId: '30', owner: 'server-a', version: 1 });
      expect(a.sessionId).to.be.a('string').and.not.equal('');
      expect(a.values).to.deep.equal({ level: 4 });
      expect(Date.parse(a.expiresAt)).to.be.greaterThan(Date.now());

      const fresh = await client.acquireSession(31, 'server-a', { load: true });
      expect(fresh).to.deep.include({ values: {}, version: 0 });

      const locked = await playerDataError(client.acquireSession(30, 'server-b'));
      expect(locked).to.include({ operation: 'acquireSession', status: 409, code: 'SESSION_LOCKED', attempts: 1 });
      expect(locked.data).to.deep.equal({ owner: 'server-a', expiresAt: a.expiresAt });
    });

    it('writes must carry the live session; a steal fences the old holder out', async () => {
      const a = await client.acquireSession(32, 'server-a');
      const none = await playerDataError(client.set(32, 'level', 1));
      expect(none).to.include({ status: 409, code: 'SESSION_LOCKED' });
      expect((none.data as { owner: string }).owner).to.equal('server-a');
      expect((await client.set(32, 'level', 1, { sessionId: a.sessionId })).version).to.equal(1);

      const b = await client.acquireSession(32, 'server-b', { steal: true, load: true });
      expect(b.values).to.deep.equal({ level: 1 });
      expect(b.sessionId).to.not.equal(a.sessionId);
      for (const late of [
        () => client.set(32, 'level', 99, { sessionId: a.sessionId }),
        () => client.increment(32, 'coins', 1, 0, { sessionId: a.sessionId }),
        () => client.delete(32, undefined, { sessionId: a.sessionId }),
        () => client.batch(32, [{ op: 'set', key: 'level', value: 99 }], { sessionId: a.sessionId }),
        () => client.renewSession(32, a.sessionId),
      ]) {
        expect(await playerDataError(late())).to.include({ status: 409, code: 'SESSION_LOST', attempts: 1 });
      }
      expect(await client.incrementVersioned(32, 'coins', 3, 0, { sessionId: b.sessionId })).to.deep.equal({ value: 3, version: 2 });
      expect(await stored(32)).to.deep.include({ data: { level: 1, coins: 3 }, version: 2 });

      const renewed = await client.renewSession(32, b.sessionId, { ttlSeconds: 600 });
      expect(renewed).to.include({ sessionId: b.sessionId, owner: 'server-b', userId: '32' });
      expect(Date.parse(renewed.expiresAt)).to.be.greaterThan(Date.parse(b.expiresAt));
      expect(await client.releaseSession(32, b.sessionId)).to.deep.equal({ released: true, version: 2 });
      expect(await client.releaseSession(32, b.sessionId), 'release is idempotent').to.deep.equal({ released: false, version: 2 });
      expect((await client.set(32, 'level', 2)).version, 'free again').to.equal(3);
    });

    it('a batch with release is the last save and the release in one request', async () => {
      const s = await client.acquireSession(33, 'server-a', { load: true });
      const { result, requests } = await countingFetch(() =>
        client.batch(33, [{ op: 'set', key: 'level', value: 7 }], { sessionId: s.sessionId, ifVersion: s.version, release: true }),
      );
      expect(requests).to.equal(1);
      expect((result as PlayerData.BatchResult).version).to.equal(1);
      expect(await client.acquireSession(33, 'server-b')).to.include({ owner: 'server-b', version: 1 });
    });
  });

  describe('idempotency keys', () => {
    it('the same key is applied once and answered again; the same key with another body is IDEMPOTENCY_KEY_REUSED', async () => {
      const purchase = { idempotencyKey: 'purchase-p1' };
      expect(await client.incrementVersioned(40, 'coins', 100, 0, purchase)).to.deep.equal({ value: 100, version: 1 });
      expect(await client.incrementVersioned(40, 'coins', 100, 0, purchase)).to.deep.equal({ value: 100, version: 1 });
      expect((await stored(40)).data).to.deep.equal({ coins: 100 });
      const { result, requests } = await countingFetch(() => client.increment(40, 'coins', 5, 0, purchase));
      expect(result).to.include({ status: 422, code: 'IDEMPOTENCY_KEY_REUSED', retryable: false });
      expect(requests).to.equal(1);
      expect(await client.increment(40, 'coins', 100), 'without a key of its own, each call is a new write').to.equal(200);
      expect(await client.increment(40, 'coins', 100)).to.equal(300);
    });

    it('ten concurrent calls with one key count once and all answer the same', async () => {
      const patient = new PlayerDataClient({ baseUrl: t.service.baseUrl, apiKey: ws.apiKey, retry: { attempts: 10, baseDelayMs: 5 } });
      const answers = await Promise.all(
        Array.from({ length: 10 }, () => patient.incrementVersioned(45, 'coins', 100, 0, { idempotencyKey: 'purchase-p9' })),
      );
      expect(answers).to.deep.equal(Array.from({ length: 10 }, () => ({ value: 100, version: 1 })));
      expect(await stored(45)).to.deep.include({ data: { coins: 100 }, version: 1 });
    });

    it('a write whose answer was lost is retried with the same key and counted once', async () => {
      const proxy = await startHttpProxy(t.service.baseUrl, (n) => (n === 1 ? 'drop-answer' : 'forward'));
      try {
        const via = new PlayerDataClient({ baseUrl: proxy.baseUrl, apiKey: ws.apiKey, retry: { baseDelayMs: 5 } });
        expect(await via.increment(41, 'coins', 100)).to.equal(100);
        expect(proxy.requests).to.have.length(2);
        const [first, retry] = proxy.requests;
        expect(first!.headers['idempotency-key']).to.be.a('string').and.match(/^[0-9a-f-]{36}$/);
        expect(retry!.headers['idempotency-key']).to.equal(first!.headers['idempotency-key']);
        expect(retry!.body).to.equal(first!.body);
        expect(await stored(41)).to.deep.include({ data: { coins: 100 }, version: 1 });
      } finally {
        await proxy.close();
      }
    });

    it('a lost acquire answer retried gives the session that was taken, which then holds the player', async () => {
      const proxy = await startHttpProxy(t.service.baseUrl, (n) => (n === 1 ? 'drop-answer' : 'forward'));
      try {
        const via = new PlayerDataClient({ baseUrl: proxy.baseUrl, apiKey: ws.apiKey, retry: { baseDelayMs: 5 } });
        const session = await via.acquireSession(42, 'server-a', { load: true });
        expect(proxy.requests).to.have.length(2);
        expect((await client.set(42, 'level', 1, { sessionId: session.sessionId })).version).to.equal(1);
      } finally {
        await proxy.close();
      }
    });

    it('a batch of many players whose answer was lost is applied once', async () => {
      const proxy = await startHttpProxy(t.service.baseUrl, (n) => (n === 1 ? 'drop-answer' : 'forward'));
      try {
        const via = new PlayerDataClient({ baseUrl: proxy.baseUrl, apiKey: ws.apiKey, retry: { baseDelayMs: 5 } });
        const outcomes = await via.batchPlayers([
          { userId: 43, ops: [{ op: 'increment', key: 'coins', amount: 10 }] },
          { userId: 44, ops: [{ op: 'increment', key: 'coins', amount: 20 }] },
        ]);
        expect(outcomes.map((o) => o.success && o.results[0])).to.deep.equal([
          { key: 'coins', value: 10 },
          { key: 'coins', value: 20 },
        ]);
        expect([(await stored(43)).data, (await stored(44)).data]).to.deep.equal([{ coins: 10 }, { coins: 20 }]);
      } finally {
        await proxy.close();
      }
    });
  });

  describe('retries, timeouts and aborts', () => {
    it('IDEMPOTENCY_IN_PROGRESS and 503 are retried with the same key; a 4xx after them ends the call', async () => {
      const inProgress = { success: false, error: 'A request with this Idempotency-Key is in progress', code: 'IDEMPOTENCY_IN_PROGRESS' };
      const unavailable = { success: false, error: 'Storage unavailable', code: 'STORAGE_UNAVAILABLE' };
      const proxy = await startHttpProxy(t.service.baseUrl, (n) =>
        n === 1 ? { status: 409, body: inProgress } : n === 2 ? { status: 503, body: unavailable } : 'forward',
      );
      try {
        const via = new PlayerDataClient({ baseUrl: proxy.baseUrl, apiKey: ws.apiKey, retry: { attempts: 4, baseDelayMs: 5 } });
        expect(await via.increment(50, 'coins', 7)).to.equal(7);
        expect(proxy.requests).to.have.length(3);
        expect(new Set(proxy.requests.map((r) => r.headers['idempotency-key'])).size).to.equal(1);
        await via.set(50, 'name', 'Ann');
        const before = proxy.requests.length;
        const err = await playerDataError(via.increment(50, 'name', 1));
        expect(err).to.include({ code: 'NOT_A_NUMBER', attempts: 1 });
        expect(proxy.requests.length - before).to.equal(1);
      } finally {
        await proxy.close();
      }
    });

    it('gives up after `attempts` requests, with the last error', async () => {
      const unavailable = { success: false, error: 'Storage unavailable', code: 'STORAGE_UNAVAILABLE' };
      const proxy = await startHttpProxy(t.service.baseUrl, () => ({ status: 503, body: unavailable }));
      try {
        const via = new PlayerDataClient({ baseUrl: proxy.baseUrl, apiKey: ws.apiKey, retry: { attempts: 2, baseDelayMs: 5 } });
        const err = await playerDataError(via.set(51, 'a', 1));
        expect(err).to.include({ status: 503, code: 'STORAGE_UNAVAILABLE', retryable: true, attempts: 2 });
        expect(proxy.requests).to.have.length(2);
        const once = new PlayerDataClient({ baseUrl: proxy.baseUrl, apiKey: ws.apiKey, retry: { attempts: 1 } });
        expect(await playerDataError(once.get(51, 'a'))).to.include({ status: 503, attempts: 1 });
        expect(proxy.requests).to.have.length(3);
      } finally {
        await proxy.close();
      }
    });

    it('a request that gets no answer times out (TIMEOUT) and is retried', async () => {
      const proxy = await startHttpProxy(t.service.baseUrl, () => 'hang');
      try {
        const via = new PlayerDataClient({ baseUrl: proxy.baseUrl, apiKey: ws.apiKey, timeoutMs: 100, retry: { attempts: 2, baseDelayMs: 5 } });
        const err = await playerDataError(via.increment(52, 'coins'));
        expect(err).to.include({ operation: 'increment', status: 0, code: 'TIMEOUT', retryable: true, attempts: 2 });
        expect(err.message).to.equal('PlayerData.increment: request failed: no answer within 100 ms');
        expect(proxy.requests).to.have.length(2);
      } finally {
        await proxy.close();
      }
    });

    it('an AbortSignal ends a call mid-request, and it is not retried', async () => {
      const proxy = await startHttpProxy(t.service.baseUrl, () => 'hang');
      try {
        const via = new PlayerDataClient({ baseUrl: proxy.baseUrl, apiKey: ws.apiKey, timeoutMs: 60_000 });
        const controller = new AbortController();
        const pending = via.set(53, 'a', 1, { signal: controller.signal });
        await proxy.received(1);
        controller.abort(new Error('player left'));
        const err = await playerDataError(pending);
        expect(err).to.include({ operation: 'set', status: 0, code: 'ABORTED', retryable: false, attempts: 1 });
        expect((err.cause as Error).message).to.equal('player left');
        expect(proxy.requests).to.have.length(1);

        const { requests } = await countingFetch(() => via.get(53, 'a', { signal: AbortSignal.abort() }));
        expect(requests, 'an already aborted signal sends nothing').to.equal(0);
      } finally {
        await proxy.close();
      }
    });

    it('an AbortSignal ends the wait between retries', async () => {
      const unavailable = { success: false, error: 'Storage unavailable', code: 'STORAGE_UNAVAILABLE' };
      const proxy = await startHttpProxy(t.service.baseUrl, () => ({ status: 503, body: unavailable }));
      try {
        // The first wait is drawn from [0, 20 s]; the abort comes as soon as the first answer is in.
        const via = new PlayerDataClient({
          baseUrl: proxy.baseUrl,
          apiKey: ws.apiKey,
          retry: { attempts: 5, baseDelayMs: 20_000, maxDelayMs: 20_000 },
        });
        const controller = new AbortController();
        const { result } = await countingFetch(async () => {
          const pending = via.getAll(54, { signal: controller.signal });
          await proxy.received(1);
          setTimeout(() => controller.abort(), 20);
          return pending;
        });
        expect(result).to.include({ code: 'ABORTED', status: 0 });
        expect(proxy.requests).to.have.length(1);
      } finally {
        await proxy.close();
      }
    });
  });
});

describe('TypeScript client over a short rate-limit window', () => {
  const t = useService({ RATE_LIMIT_FREE: '2', RATE_LIMIT_WINDOW_MS: '1000', RATE_LIMIT_LEASE_AHEAD: '0' });

  it('a Retry-After over maxRateLimitWaitMs fails at once with RATE_LIMITED', async () => {
    const ws = await newWorkspace(t.redis, 'free');
    const hasty = new PlayerDataClient({ baseUrl: t.service.baseUrl, apiKey: ws.apiKey, retry: { maxRateLimitWaitMs: 500 } });
    for (;;) {
      const res = await call(t.service, 'POST', '/data/set', { key: ws.apiKey, body: { userId: 1, key: 'fill', value: 1 } });
      if (res.status === 429) break;
    }
    const { result, requests } = await countingFetch(() => hasty.increment(1, 'coins'));
    expect(result).to.include({ status: 429, code: 'RATE_LIMITED', retryable: false, attempts: 1 });
    expect((result as PlayerDataError).retryAfterSeconds).to.equal(1);
    expect(requests).to.equal(1);
  });

  it('a Retry-After within maxRateLimitWaitMs is waited for, then the same write is sent again', async () => {
    const ws = await newWorkspace(t.redis, 'free');
    const limited = { success: false, error: 'Rate limit exceeded', code: 'RATE_LIMITED' };
    const proxy = await startHttpProxy(t.service.baseUrl, (n) =>
      n === 1 ? { status: 429, headers: { 'retry-after': '1' }, body: limited } : 'forward',
    );
    try {
      const patient = new PlayerDataClient({ baseUrl: proxy.baseUrl, apiKey: ws.apiKey, retry: { maxRateLimitWaitMs: 1_000 } });
      expect(await patient.increment(2, 'coins', 3)).to.equal(3);
      expect(proxy.requests).to.have.length(2);
      expect(proxy.requests[1]!.headers['idempotency-key']).to.equal(proxy.requests[0]!.headers['idempotency-key']);
    } finally {
      await proxy.close();
    }
  });
});

// The service's own IDEMPOTENCY_IN_PROGRESS: a first request held inside the service (its Redis
// replies held by a proxy) while the client sends the same write with the same key.
describe('TypeScript client and a write still in flight (IDEMPOTENCY_IN_PROGRESS)', () => {
  it('is retried with the same key and body until the first answer can be replayed, and counts once', async () => {
    const proxy = await startRedisProxy(Number(new URL(testRedisUrl()).port || 6379));
    const service = await startTestService({ REDIS_URL: proxy.url });
    const redis = testRedis();
    const realFetch = globalThis.fetch;
    try {
      const ws = await newWorkspace(redis);
      await new Promise((r) => setTimeout(r, 200)); // the key's creation event passes before it is cached
      const client = new PlayerDataClient({ baseUrl: service.baseUrl, apiKey: ws.apiKey, retry: { attempts: 10, baseDelayMs: 20 } });
      // Caches the key and fills the rate limiter's lease, so that neither request below needs
      // Redis before its idempotency claim.
      for (let i = 0; i < 15; i++) await client.set(1, 'warm', i);
      proxy.reset();
      proxy.hold();
      const first = call(service, 'POST', '/data/increment', {
        key: ws.apiKey,
        body: { userId: '2', key: 'coins', amount: 5 },
        headers: { 'Idempotency-Key': 'dup-1' },
      });
      for (let i = 0; !proxy.sent().includes('NX'); i++) {
        expect(i, 'the first request reaches its idempotency claim').to.be.lessThan(400);
        await new Promise((r) => setTimeout(r, 5));
      }
      // The client's answers, seen as they arrive; the held request is let go after the first.
      const statuses: Array<[number, string | undefined]> = [];
      const bodies: string[] = [];
      globalThis.fetch = async (input, init) => {
        bodies.push(String(init?.body));
        const res = await realFetch(input, init);
        const code = ((await res.clone().json()) as { code?: string }).code;
        statuses.push([res.status, code]);
        proxy.release();
        return res;
      };
      expect(await client.increment('2', 'coins', 5, undefined, { idempotencyKey: 'dup-1' })).to.equal(5);
      expect((await first).body).to.deep.equal({ success: true, value: 5, version: 1 });
      expect(statuses[0]).to.deep.equal([409, 'IDEMPOTENCY_IN_PROGRESS']);
      expect(statuses.at(-1)).to.deep.equal([200, undefined]);
      expect(new Set(bodies).size, 'every retry sends the same body').to.equal(1);
      expect((await call(service, 'GET', '/data?userId=2', { key: ws.apiKey })).body).to.deep.include({ data: { coins: 5 }, version: 1 });
    } finally {
      globalThis.fetch = realFetch;
      proxy.release();
      await service.close();
      await proxy.close();
      redis.disconnect();
    }
  });
});

describe("the TypeScript client README's examples (against the service)", () => {
  const t = useService();
  const readme = readFileSync(new URL('../../clients/typescript/README.md', import.meta.url), 'utf8');
  const examples = [...readme.matchAll(/```ts\n([\s\S]*?)```/g)].map((m) => m[1]!).filter((code) => code.includes("from '@player-data-service/client'"));
  const clientUrl = pathToFileURL(new URL('../../clients/typescript/src/index.ts', import.meta.url).pathname).href;
  let dir: string;
  let ws: CreatedWorkspace;
  let client: PlayerDataClient;
  before(() => {
    dir = mkdtempSync(join(tmpdir(), 'pds-ts-readme-'));
  });
  after(() => rmSync(dir, { recursive: true, force: true }));
  beforeEach(async () => {
    ws = await newWorkspace(t.redis);
    client = new PlayerDataClient({ baseUrl: t.service.baseUrl, apiKey: ws.apiKey });
  });

  /** Imports the example that defines `name`, as written, as the server `serverId`. */
  async function loadExample(name: string, serverId: string): Promise<any> {
    const code = examples.find((e) => e.includes(`export async function ${name}(`));
    expect(code, `README example defining ${name}`).to.be.a('string');
    const file = join(dir, `${name}-${serverId}.mts`);
    writeFileSync(file, code!.split('@player-data-service/client').join(clientUrl));
    Object.assign(process.env, { PDS_URL: t.service.baseUrl, PDS_API_KEY: ws.apiKey, SERVER_ID: serverId });
    try {
      return await import(`${pathToFileURL(file).href}?${ws.workspaceId}`);
    } finally {
      for (const name of ['PDS_URL', 'PDS_API_KEY', 'SERVER_ID']) delete process.env[name];
    }
  }
  const stored = async (userId: number) => (await call(t.service, 'GET', `/data?userId=${userId}`, { key: ws.apiKey })).body.data;

  it('a safe purchase counts once however often it runs, with or without a session', async () => {
    const { grantPurchase } = await loadExample('grantPurchase', 'shop');
    expect(await grantPurchase(60, 'p1', 100)).to.equal(100);
    expect(await grantPurchase(60, 'p1', 100)).to.equal(100);
    expect(await grantPurchase(60, 'p2', 100)).to.equal(200);
    const session = await client.acquireSession(61, 'server-a');
    expect(await grantPurchase(61, 'p3', 50, session.sessionId)).to.equal(50);
    expect(await grantPurchase(61, 'p3', 50, session.sessionId)).to.equal(50);
    expect([await stored(60), await stored(61)]).to.deep.equal([{ coins: 200 }, { coins: 50 }]);
  });

  it('a session-held save: join loads, save writes the changes, a stolen session never writes again, shutdown releases', async () => {
    await client.set(70, 'level', 1);
    const a = await loadExample('join', 'server-a');
    const b = await loadExample('join', 'server-b');
    expect((await a.join(70)).values).to.deep.equal({ level: 1 });
    a.change(70, 'level', 2);
    await a.save(70);
    expect(await stored(70)).to.deep.equal({ level: 2 });

    expect((await b.join(70, 0)).values, 'b steals at once with stealAfterMs 0').to.deep.equal({ level: 2 });
    a.change(70, 'level', 99);
    await a.save(70);
    expect(a.players.has(70), 'a dropped the player it lost').to.equal(false);
    expect(await stored(70)).to.deep.equal({ level: 2 });

    b.change(70, 'coins', 5);
    await b.join(71);
    b.change(71, 'level', 3);
    await b.save(71, true);
    expect(b.players.has(71)).to.equal(false);
    await b.saveAll();
    expect(b.players.size).to.equal(0);
    expect([await stored(70), await stored(71)]).to.deep.equal([{ level: 2, coins: 5 }, { level: 3 }]);
    expect(await client.acquireSession(70, 'server-c'), 'released at shutdown').to.include({ owner: 'server-c' });
  });

  it('a session-held save with messages: a gift is applied once by the holder, and by the next server after a crash before the save', async () => {
    await client.set(80, 'coins', 0);
    const a = await loadExample('join', 'server-a');
    const b = await loadExample('join', 'server-b');
    const first = await b.gift(80, 10, 'g1');
    expect(await b.gift(80, 10, 'g1'), 'a gift sent again sends once').to.equal(first);
    expect((await a.join(80)).values, 'applied in memory at join').to.deep.equal({ coins: 10 });
    expect(await stored(80)).to.deep.equal({ coins: 0 });
    await a.save(80);
    expect(await stored(80), 'written and acknowledged by the save').to.deep.equal({ coins: 10 });
    expect(await client.getMessages(80)).to.deep.equal([]);

    await b.gift(80, 5, 'g2'); // arrives while server-a holds the player
    await a.save(80); // hands it over: applied in memory, to be written by the next save
    expect(a.players.get(80).values).to.deep.equal({ coins: 15 });
    expect(await stored(80)).to.deep.equal({ coins: 10 });

    // server-a freezes before that save; server-b takes the player over and is handed g2 again.
    expect((await b.join(80, 0)).values).to.deep.equal({ coins: 15 });
    await a.save(80); // late: SESSION_LOST, so it writes and acknowledges nothing
    expect(a.players.has(80)).to.equal(false);
    expect(await client.getMessages(80)).to.have.length(1);
    await b.saveAll();
    expect(await stored(80), 'each gift landed once').to.deep.equal({ coins: 15 });
    expect(await client.getMessages(80)).to.deep.equal([]);
  });
});

// A many-player batch past the workspace's byte budget (saves/player-writes.ts): the players
// refused unwritten fail with 429 and the answer's Retry-After, and sent again they are written.
describe("TypeScript client: batchPlayers past the workspace's byte budget", () => {
  let shift = 0;
  const t = useService({ WORKSPACE_BYTES_PER_SECOND: '100000', MAX_PLAYER_BYTES: '200000' }, { clock: () => Date.now() + shift });
  // A second instance on the same Redis, with the same clock and no byte budget (0 turns it off; a fast
  // one still has a burst of MAX_PLAYER_BYTES, which two 150 KB writes a few ms apart overran), writes
  // the players a test starts from: each instance keeps its own buckets, so the tested one's is
  // full when the test begins, with no wait for its refill.
  const setup = useService({ WORKSPACE_BYTES_PER_SECOND: '0', MAX_PLAYER_BYTES: '200000' }, { clock: () => Date.now() + shift });
  const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

  it('gives the refused players 429 with retryAfterSeconds, and they are written when sent again', async () => {
    const ws = await newWorkspace(t.redis);
    const client = new PlayerDataClient({ baseUrl: t.service.baseUrl, apiKey: ws.apiKey });
    await new PlayerDataClient({ baseUrl: setup.service.baseUrl, apiKey: ws.apiKey }).set('t1', 'blob', 'b'.repeat(150_000));
    shift += 300_000; // a new restore-point interval: the delete copies the 150 KB it replaces
    const players = [
      { userId: 't1', ops: [{ op: 'delete' as const, key: 'blob' }] },
      { userId: 't2', ops: [{ op: 'set' as const, key: 'coins', value: 2 }] },
    ];
    const first = await client.batchPlayers(players);
    expect(first.map((o) => o.success)).to.deep.equal([true, false]);
    const refused = first[1]!;
    if (refused.success) throw new Error('t2 was written');
    expect([refused.error.status, refused.error.code]).to.deep.equal([429, 'RATE_LIMITED']);
    expect(refused.error.retryAfterSeconds).to.be.a('number').and.to.be.at.least(1);
    await sleep(refused.error.retryAfterSeconds! * 1000 + 100);
    const again = await client.batchPlayers([players[1]!]);
    expect(again.map((o) => o.success)).to.deep.equal([true]);
    expect(await client.get('t2', 'coins')).to.equal(2);
  });

  it('acquireSessions gives a player whose load did not fit 429 with retryAfterSeconds; acquired again after it, it loads', async () => {
    const ws = await newWorkspace(t.redis);
    const client = new PlayerDataClient({ baseUrl: t.service.baseUrl, apiKey: ws.apiKey });
    const unlimited = new PlayerDataClient({ baseUrl: setup.service.baseUrl, apiKey: ws.apiKey });
    for (const userId of ['l1', 'l2']) await unlimited.set(userId, 'blob', 'b'.repeat(150_000));
    // 2 x 150 KB against a 200 KB burst: the second load is refused, its session held.
    const first = await client.acquireSessions(['l1', 'l2'], 'server', { load: true });
    expect(first.map((o) => o.success)).to.deep.equal([true, false]);
    const refused = first[1]!;
    if (refused.success) throw new Error('l2 was loaded');
    expect([refused.error.status, refused.error.code]).to.deep.equal([429, 'RATE_LIMITED']);
    expect(refused.error.retryAfterSeconds).to.be.a('number').and.to.be.at.least(1);
    await sleep(refused.error.retryAfterSeconds! * 1000 + 100);
    const again = await client.acquireSession('l2', 'server', { load: true });
    expect(again.values['blob']).to.have.length(150_000);
  });
});
