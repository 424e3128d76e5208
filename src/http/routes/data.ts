// The player data endpoints: validate, call the store, shape the answer. Stored values are
// JSON text already, so answers are assembled as text rather than parsed and re-serialized.
import type Router from '@koa/router';
import type { Middleware } from 'koa';
import { parse as parseQuery } from 'node:querystring';
import type { Config } from '../../config.js';
import { isoTime } from '../../domain/entry.js';
import { normalizeUserId } from '../../domain/ids.js';
import { checkValue } from '../../domain/value.js';
import { badRequest, ErrorCode, notFound } from '../../errors.js';
import { deleteBody, getDataQuery, incrementBody, setBody } from '../../schemas/data.js';
import type { PlayerDataStore } from '../../store/player-data.js';
import { requireWriteScope } from '../middleware/authenticate.js';
import { chain } from '../chain.js';
import { sendJson } from '../json.js';
import { jsonBody } from '../middleware/json-body.js';
import type { AppState } from '../state.js';
import { compile } from '../validate.js';

type UserIdInput = string | number;
const validateGet = compile<{ userId: string; key?: string }>(getDataQuery);
const validateSet = compile<{ userId: UserIdInput; key: string; value: unknown }>(setBody);
const validateIncrement = compile<{ userId: UserIdInput; key: string; amount?: number; defaultValue?: number }>(
  incrementBody,
);
const validateDelete = compile<{ userId: UserIdInput; key?: string }>(deleteBody);

function userIdOf(raw: UserIdInput): string {
  const userId = normalizeUserId(raw);
  // The schema already holds userId to this shape; this guards the one case it cannot see.
  if (userId === undefined) throw badRequest('Invalid field "userId": must be a non-negative safe integer or a string');
  return userId;
}

export interface DataRouteDeps {
  /** Authenticates and counts the request against the plan (app.ts); every route starts with it. */
  readonly guard: Middleware<AppState>;
  readonly players: PlayerDataStore;
  readonly config: Pick<Config, 'limits'>;
}

export function dataRoutes(router: Router<AppState>, { guard, players, config }: DataRouteDeps): void {
  const body = jsonBody(config.limits.maxBodyBytes);
  const maxDepth = config.limits.maxValueDepth;

  router.get('/data', chain(guard, async (ctx) => {
    // node:querystring rather than koa's ctx.query (URLSearchParams, then a defineProperty per
    // key): the same object for any query string, at a quarter of the cost on every read.
    const query = validateGet('query', parseQuery(ctx.querystring));
    const workspaceId = ctx.state.principal!.workspace.id;
    const userId = userIdOf(query.userId);

    if (query.key === undefined) {
      const entries = await players.getAll(workspaceId, userId);
      if (entries.length === 0) throw notFound('Player not found', ErrorCode.PLAYER_NOT_FOUND);
      const fields = entries.map(([key, valueJson]) => `${JSON.stringify(key)}:${valueJson}`);
      return sendJson(ctx, `{"success":true,"data":{${fields.join(',')}}}`);
    }

    const result = await players.get(workspaceId, userId, query.key);
    if (!result.found) throw result.playerExists ? notFound('Key not found', ErrorCode.KEY_NOT_FOUND) : notFound('Player not found', ErrorCode.PLAYER_NOT_FOUND);
    sendJson(
      ctx,
      `{"success":true,"data":{"key":${JSON.stringify(query.key)},"value":${result.entry.valueJson},"updated_at":"${isoTime(result.entry.updatedAtMs)}"}}`,
    );
  }));

  router.post('/data/set', chain(guard, requireWriteScope, body, async (ctx) => {
    const input = validateSet('body', ctx.request.body);
    const problem = checkValue(input.value, maxDepth);
    if (problem) throw badRequest(`Invalid field "value" in body: ${problem}`);
    const valueJson = JSON.stringify(input.value);
    const now = ctx.state.startedAt;
    await players.set(ctx.state.principal!.workspace.id, userIdOf(input.userId), input.key, valueJson, now);
    sendJson(
      ctx,
      `{"success":true,"data":{"key":${JSON.stringify(input.key)},"value":${valueJson},"updated_at":"${isoTime(now)}"}}`,
    );
  }));

  router.post('/data/increment', chain(guard, requireWriteScope, body, async (ctx) => {
    const input = validateIncrement('body', ctx.request.body);
    const value = await players.increment(
      ctx.state.principal!.workspace.id,
      userIdOf(input.userId),
      input.key,
      input.amount ?? 1,
      input.defaultValue ?? 0,
      ctx.state.startedAt,
    );
    sendJson(ctx, `{"success":true,"value":${JSON.stringify(value)}}`);
  }));

  router.post('/data/delete', chain(guard, requireWriteScope, body, async (ctx) => {
    const input = validateDelete('body', ctx.request.body);
    const workspaceId = ctx.state.principal!.workspace.id;
    const userId = userIdOf(input.userId);
    const deleted =
      input.key === undefined
        ? await players.deletePlayer(workspaceId, userId)
        : await players.deleteKey(workspaceId, userId, input.key);
    sendJson(ctx, `{"success":true,"data":{"deleted":${deleted}}}`);
  }));
}
