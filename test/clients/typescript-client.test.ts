// The TypeScript client (clients/typescript, imported from source) against the real service.
import { expect } from 'chai';
import * as PlayerData from '../../clients/typescript/src/index.js';
import { PlayerDataClient, PlayerDataError } from '../../clients/typescript/src/index.js';
import type { CreatedWorkspace } from '../../src/admin/operations.js';
import { keys } from '../../src/store/keys.js';
import { call, newWorkspace, useService } from '../support/service.js';
import { unreachableBaseUrl } from './unreachable.js';

/** Resolves to what `promise` rejected with; fails the test if it resolved. */
async function rejection(promise: Promise<unknown>): Promise<Error> {
  try {
    await promise;
  } catch (err) {
    expect(err).to.be.instanceOf(Error);
    return err as Error;
  }
  expect.fail('expected a rejection');
}

async function playerDataError(promise: Promise<unknown>): Promise<PlayerDataError> {
  const err = await rejection(promise);
  expect(err).to.be.instanceOf(PlayerDataError);
  return err as PlayerDataError;
}

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
      expect(err).to.include({ operation: 'init', status: 401, serverMessage: server.body.error });
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
      expect(wrong).to.include({ status: 404, serverMessage: 'No such endpoint: GET /ping', retryable: false });
      const unchecked = new PlayerDataClient({ baseUrl: t.service.baseUrl.replace('/api/v1', ''), apiKey: ws.apiKey });
      expect(await playerDataError(unchecked.get(1, 'k'))).to.include({ operation: 'get', status: 404 });
      const down = await playerDataError(PlayerData.init({ baseUrl: await unreachableBaseUrl(), apiKey: ws.apiKey }));
      expect(down).to.include({ operation: 'init', status: 0, retryable: true });
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
      expect(err).to.include({ operation: 'increment', status: 409, serverMessage: server.body.error, retryable: false });
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
      expect(err).to.include({ operation: 'set', status: 400, serverMessage: server.body.error });
      expect(err.message).to.equal(`PlayerData.set: HTTP 400: ${server.body.error}`);
    });

    it('a 500 is a retryable error, not undefined', async () => {
      await t.redis.hset(keys.player(ws.workspaceId, '4'), 'broken', 'not an entry');
      const err = await playerDataError(PlayerData.get(4, 'broken'));
      expect(err).to.include({ operation: 'get', status: 500, serverMessage: 'Internal server error', retryable: true });
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
    expect(err).to.include({ operation: 'set', status: 429, retryable: false });
    expect(err.retryAfterSeconds).to.be.within(1, 10);
    expect(err.serverMessage).to.equal(
      `Rate limit exceeded: the free plan allows 3 requests per 10 s; the window resets in ${err.retryAfterSeconds} s`,
    );
    expect(err.message).to.equal(`PlayerData.set: HTTP 429: ${err.serverMessage} (retry after ${err.retryAfterSeconds} s)`);
  });
});
