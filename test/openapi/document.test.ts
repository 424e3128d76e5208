import { Validator } from '@seriousme/openapi-schema-validator';
import { expect } from 'chai';
import type Koa from 'koa';
import { buildApp } from '../../src/app.js';
import type { AdminOperations } from '../../src/admin/operations.js';
import type { Authenticator } from '../../src/auth/authenticator.js';
import type { ErasureRequests } from '../../src/erasure/requests.js';
import { loadConfig } from '../../src/config.js';
import { buildOpenApiDocument, toOpenApiPath } from '../../src/openapi/document.js';
import { buildOpsApp } from '../../src/ops/app.js';
import { createLogger } from '../../src/logger.js';
import type { RunningService } from '../../src/server.js';
import type { WorkspaceStore } from '../../src/store/workspaces/workspaces.js';
import type { PlayerMessages } from '../../src/saves/player-messages.js';
import type { PlayerWrites } from '../../src/saves/player-writes.js';
import type { BoardWrites } from '../../src/boards/board-writes.js';
import type { LeaderboardStore } from '../../src/store/boards/leaderboard-store.js';
import type { PlayerDataStore } from '../../src/store/players/player-data.js';
import type { PlayerPages } from '../../src/store/workspaces/player-pages.js';
import type { RateLimiter } from '../../src/store/workspaces/rate-limiter.js';
import { ResponseChecker } from '../support/openapi-check.js';
import type { RecordedResponse } from '../support/response-recorder.js';
import { call, startTestService } from '../support/service.js';

type Json = Record<string, any>;

/** Every METHOD path that the app's routers register, read from the routers themselves. */
function registeredRoutes(app: Koa<any>): string[] {
  const out: string[] = [];
  for (const middleware of app.middleware as Array<{ router?: { stack: Array<{ path: string; methods: string[] }> } }>) {
    for (const layer of middleware.router?.stack ?? []) {
      for (const method of layer.methods) {
        if (method !== 'HEAD') out.push(`${method.toLowerCase()} ${toOpenApiPath(layer.path)}`);
      }
    }
  }
  return out.sort();
}

function documentedRoutes(doc: Json): string[] {
  const out: string[] = [];
  for (const [path, item] of Object.entries<Json>(doc['paths'])) {
    for (const method of ['get', 'put', 'post', 'delete', 'patch']) if (item[method]) out.push(`${method} ${path}`);
  }
  return out.sort();
}

describe('OpenAPI document', () => {
  const doc = buildOpenApiDocument() as Json;

  it('is a valid OpenAPI 3.1 document', async () => {
    const result = await new Validator().validate(structuredClone(doc));
    expect(result.errors ?? [], JSON.stringify(result.errors)).to.deep.equal([]);
    expect(result.valid).to.equal(true);
    expect(doc['openapi']).to.match(/^3\.1\./);
  });

  it('describes exactly the routes the public app, the ops listener and the admin API register', () => {
    // Every optional listener's routes on: the admin API, and the platform's webhook.
    const config = loadConfig({
      ADMIN_TOKEN: 'a'.repeat(32),
      LOG_LEVEL: 'silent',
      ROBLOX_WEBHOOK_SECRET: 'w'.repeat(32),
      ERASURE_DIGEST_SECRET: 'd'.repeat(32),
    });
    const logger = createLogger(config);
    // Building the apps performs no I/O, so the stores are never called.
    const publicApp = buildApp({
      config,
      logger,
      authenticator: {} as Authenticator,
      limiter: {} as RateLimiter,
      players: {} as PlayerDataStore,
      playerPages: {} as PlayerPages,
      writes: {} as PlayerWrites,
      boards: {} as LeaderboardStore,
      boardWrites: {} as BoardWrites,
      messages: {} as PlayerMessages,
      workspaces: {} as WorkspaceStore,
      erasures: {} as ErasureRequests,
    });
    const opsApp = buildOpsApp({ config, logger, readiness: { check: async () => ({ problems: [], redis: { masters: 1, answering: ['127.0.0.1:6379'], notAnswering: [] } }) }, ops: {} as AdminOperations });
    const registered = [...registeredRoutes(publicApp), ...registeredRoutes(opsApp)].sort();
    expect(registered).to.include('get /api/v1/data').and.include('post /admin/v1/workspaces').and.include('get /metrics').and.include('post /api/v1/webhooks/roblox');
    expect(documentedRoutes(doc)).to.deep.equal(registered);
  });

  it('declares a response schema for every status of every operation, and the error envelope for errors', () => {
    for (const [path, item] of Object.entries<Json>(doc['paths'])) {
      for (const [method, op] of Object.entries<Json>(item)) {
        if (method === 'servers') continue;
        const statuses = Object.keys(op['responses']);
        // One success answer: 200, or 201 for a route that creates something.
        expect(statuses.filter((st) => st === '200' || st === '201'), `${method} ${path}`).to.have.length(1);
        for (const status of statuses) {
          const content = op['responses'][status]['content'];
          const schema = Object.values<Json>(content)[0]!['schema'];
          expect(schema, `${method} ${path} ${status}`).to.be.an('object');
          if (Number(status) >= 400) expect(schema).to.deep.equal({ $ref: '#/components/schemas/Error' });
        }
        if (op['security'].length > 0) expect(statuses, `${method} ${path}`).to.include('401');
      }
    }
    const limited = doc['paths']['/api/v1/data/set']['post']['responses']['429'];
    expect(Object.keys(limited['headers'])).to.have.members([
      'X-Request-Id',
      'Retry-After',
      'X-RateLimit-Limit',
      'X-RateLimit-Remaining',
      'X-RateLimit-Reset',
    ]);
  });

  it('takes its request schemas from the objects ajv validates with', async () => {
    const { setBody, getDataQuery } = await import('../../src/schemas/data.js');
    const set = doc['paths']['/api/v1/data/set']['post'];
    expect(set['requestBody']['content']['application/json']['schema']).to.deep.equal(setBody);
    const names = doc['paths']['/api/v1/data']['get']['parameters'].map((p: Json) => p['name']);
    expect(names).to.deep.equal(Object.keys(getDataQuery.properties));
  });

  describe('served at GET /api/v1/openapi.json', () => {
    let service: RunningService;
    before(async () => {
      service = await startTestService();
    });
    after(() => service.close());

    it('without an API key, as the public API\'s document alone', async () => {
      const res = await call(service, 'GET', '/openapi.json');
      expect(res.status).to.equal(200);
      expect(res.headers.get('content-type')).to.match(/^application\/json/);
      expect(res.body).to.deep.equal(JSON.parse(JSON.stringify(buildOpenApiDocument('public'))));
    });
  });

  describe('the end-of-run response check', () => {
    const checker = new ResponseChecker(doc);
    const base: RecordedResponse = {
      method: 'GET',
      path: '/api/v1/ping',
      status: 200,
      contentType: 'application/json; charset=utf-8',
      headers: {
        'x-request-id': 'req-1',
        'x-ratelimit-limit': '300',
        'x-ratelimit-remaining': '299',
        'x-ratelimit-reset': '10',
      },
      body: { success: true, workspaceId: 'ws_1', workspaceName: 'n', plan: 'pro' },
      test: 'synthetic',
    };

    it('accepts a described response', () => {
      expect(checker.check(base)).to.equal(undefined);
    });

    it('rejects an undeclared status, an extra field, a wrong type, a missing header and an undeclared route', () => {
      expect(checker.check({ ...base, status: 418 })).to.match(/status not in the document/);
      expect(checker.check({ ...base, body: { ...(base.body as Json), extra: 1 } })).to.match(/does not match/);
      expect(checker.check({ ...base, body: { ...(base.body as Json), plan: 'gold' } })).to.match(/does not match/);
      expect(checker.check({ ...base, headers: { 'x-request-id': 'req-1' } })).to.match(/header X-RateLimit-Limit missing/);
      expect(checker.check({ ...base, headers: { ...base.headers, 'x-ratelimit-limit': 'many' } })).to.match(
        /header X-RateLimit-Limit "many" does not match/,
      );
      expect(checker.check({ ...base, path: '/api/v1/nope', status: 200 })).to.match(/undeclared/);
      expect(checker.check({ ...base, status: 401, body: { success: false } })).to.match(/does not match/);
    });

    it('matches path templates, and holds undeclared paths to the error envelope', () => {
      const workspace = { id: 'ws_1', name: 'n', plan: 'free', createdAt: '2026-01-01T00:00:00.000Z' };
      const admin = {
        ...base,
        path: '/admin/v1/workspaces/ws_1',
        headers: { 'x-request-id': 'req-2' },
        body: { success: true, data: { ...workspace, keys: [], storage: { bytes: 0, players: 0, historyBytes: 0, boardBytes: 0, keptBytes: 0, messageBytes: 0, sessionBytes: 0, quotaBytes: 1, quotaUsedBytes: 0, quotaPercent: 0, dataRedisBytes: 0 } } },
      };
      expect(checker.check(admin)).to.equal(undefined);
      const unknown = { ...base, path: '/api/v1/nope', status: 404, body: { success: false, error: 'No such endpoint', code: 'NOT_FOUND' } };
      expect(checker.check(unknown)).to.equal(undefined);
    });
  });
});
