// The player data endpoints: validate, call the store, shape the answer. Stored values are
// JSON text already, so answers are assembled as text rather than parsed and re-serialized.
// Writes go through saves/player-writes.ts (versions, sessions, idempotency keys).
import type Router from '@koa/router';
import type { Middleware } from 'koa';
import { parse as parseQuery } from 'node:querystring';
import type { Config } from '../../config.js';
import { isoTime } from '../../domain/entry.js';
import { normalizeUserId } from '../../domain/ids.js';
import { checkValue } from '../../domain/value.js';
import { AppError, badRequest, ErrorCode } from '../../errors.js';
import type { PlayerWrites } from '../../saves/player-writes.js';
import { updatedAt } from '../../saves/outcomes.js';
import { deleteBody, getDataQuery, incrementBody, setBody } from '../../schemas/data.js';
import type { PlayerDataStore } from '../../store/players/player-data.js';
import { requireWriteScope } from '../middleware/authenticate.js';
import { chain } from '../chain.js';
import { sendJson, sendJsonBytes } from '../json.js';
import { jsonBody } from '../middleware/json-body.js';
import type { AppState } from '../state.js';
import { chargeRead } from '../byte-budget.js';
import { compile } from '../validate.js';
import { markReplayed, writeOrigin } from '../write-origin.js';

type UserIdInput = string | number;
const ANSWER_HEAD = Buffer.from('{"success":true,"data":{', 'latin1');
interface WriteGuards {
  ifVersion?: number;
  sessionId?: string;
}
const validateGet = compile<{ userId: string; key?: string }>(getDataQuery);
const validateSet = compile<{ userId: UserIdInput; key: string; value: unknown } & WriteGuards>(setBody);
const validateIncrement = compile<{ userId: UserIdInput; key: string; amount?: number; defaultValue?: number } & WriteGuards>(
  incrementBody,
);
const validateDelete = compile<{ userId: UserIdInput; key?: string } & WriteGuards>(deleteBody);

export function userIdOf(raw: UserIdInput, field = 'userId'): string {
  const userId = normalizeUserId(raw);
  // The schema already holds userId to this shape; this guards the one case it cannot see.
  if (userId === undefined) throw badRequest(`Invalid field "${field}": must be a non-negative safe integer or a string`);
  return userId;
}

const playerNotFound = (version: number) =>
  new AppError(ErrorCode.PLAYER_NOT_FOUND, 'Player not found', { extras: { version } });

export interface DataRouteDeps {
  /** Authenticates and counts the request against the plan (app.ts); every route starts with it. */
  readonly guard: Middleware<AppState>;
  /** Runs once the body has arrived: the key is checked again before the write (recheck-key.ts). */
  readonly recheck: Middleware<AppState>;
  readonly players: PlayerDataStore;
  readonly writes: PlayerWrites;
  readonly config: Pick<Config, 'limits'>;
}

export function dataRoutes(router: Router<AppState>, { guard, recheck, players, writes, config }: DataRouteDeps): void {
  const body = chain(jsonBody(config.limits.maxBodyBytes), recheck);
  const maxDepth = config.limits.maxValueDepth;

  router.get('/data', chain(guard, async (ctx) => {
    // node:querystring rather than koa's ctx.query (URLSearchParams, then a defineProperty per
    // key): the same object for any query string, at a quarter of the cost on every read.
    const query = validateGet('query', parseQuery(ctx.querystring));
    const workspaceId = ctx.state.principal!.workspace.id;
    const userId = userIdOf(query.userId);

    if (query.key === undefined) {
      const all = await players.readAllParts(workspaceId, userId, undefined, (bytes) => chargeRead(ctx, bytes));
      if (!all.complete) {
        throw new AppError(
          ErrorCode.PLAYER_TOO_LARGE,
          `Player holds ${all.bytes} bytes in ${all.keys} keys, more than one answer carries (${config.limits.maxPlayerBytes} bytes): read its keys one at a time`,
          { extras: { version: all.version } },
        );
      }
      if (all.members === 0) throw playerNotFound(all.version);
      if (typeof all.body === 'string') {
        return sendJson(ctx, `{"success":true,"data":{${all.body}},"version":${all.version}}`);
      }
      // A large player: its values stay the bytes Redis sent (one copy into the answer).
      return sendJsonBytes(
        ctx,
        Buffer.concat([ANSWER_HEAD, ...all.body, Buffer.from(`},"version":${all.version}}`, 'latin1')]),
      );
    }

    const result = await players.get(workspaceId, userId, query.key);
    if (!result.found) {
      if (!result.playerExists) throw playerNotFound(result.version);
      throw new AppError(ErrorCode.KEY_NOT_FOUND, 'Key not found', { extras: { version: result.version } });
    }
    sendJson(
      ctx,
      `{"success":true,"data":{"key":${JSON.stringify(query.key)},"value":${result.entry.valueJson},"updated_at":"${isoTime(result.entry.updatedAtMs)}"},"version":${result.version}}`,
    );
  }));

  router.post('/data/set', chain(guard, requireWriteScope, body, async (ctx) => {
    const input = validateSet('body', ctx.request.body);
    const problem = checkValue(input.value, maxDepth);
    if (problem) throw badRequest(`Invalid field "value" in body: ${problem}`);
    const valueJson = JSON.stringify(input.value);
    const applied = await writes.one(writeOrigin(ctx, input), {
      userId: userIdOf(input.userId),
      write: { ops: [{ op: 'set', key: input.key, valueJson }], ifVersion: input.ifVersion, sessionId: input.sessionId },
      kind: 'set',
    });
    markReplayed(ctx, applied.replayed);
    sendJson(
      ctx,
      `{"success":true,"data":{"key":${JSON.stringify(input.key)},"value":${valueJson},"updated_at":"${updatedAt(applied.results[0]!)}"},"version":${applied.version}}`,
    );
  }));

  router.post('/data/increment', chain(guard, requireWriteScope, body, async (ctx) => {
    const input = validateIncrement('body', ctx.request.body);
    const applied = await writes.one(writeOrigin(ctx, input), {
      userId: userIdOf(input.userId),
      write: {
        ops: [{ op: 'increment', key: input.key, amount: input.amount ?? 1, defaultValue: input.defaultValue ?? 0 }],
        ifVersion: input.ifVersion,
        sessionId: input.sessionId,
      },
      kind: 'increment',
    });
    markReplayed(ctx, applied.replayed);
    sendJson(ctx, `{"success":true,"value":${JSON.stringify(Number(applied.results[0]))},"version":${applied.version}}`);
  }));

  router.post('/data/delete', chain(guard, requireWriteScope, body, async (ctx) => {
    const input = validateDelete('body', ctx.request.body);
    const guards = { ifVersion: input.ifVersion, sessionId: input.sessionId };
    const applied = await writes.one(writeOrigin(ctx, input), {
      userId: userIdOf(input.userId),
      write:
        input.key === undefined
          ? { ops: [], deleteAll: true, ...guards }
          : { ops: [{ op: 'delete', key: input.key }], ...guards },
      kind: 'delete',
    });
    markReplayed(ctx, applied.replayed);
    sendJson(ctx, `{"success":true,"data":{"deleted":${Number(applied.results[0])}},"version":${applied.version}}`);
  }));
}
