// POST /data/batch: one player's ops all or nothing, or many players' in one request (each
// atomic, independent of the others). One request against the plan either way.
import type Router from '@koa/router';
import type { Middleware } from 'koa';
import type { Config } from '../../config.js';
import { checkValue } from '../../domain/value.js';
import { AppError, badRequest, errorBodyOf } from '../../errors.js';
import type { Applied } from '../../saves/outcomes.js';
import { updatedAt } from '../../saves/outcomes.js';
import type { PlayerWriteRequest, PlayerWrites } from '../../saves/player-writes.js';
import { batchBody, multiBatchBody } from '../../schemas/data.js';
import type { Op } from '../../store/players/script-protocol.js';
import { requireWriteScope } from '../middleware/authenticate.js';
import { chain } from '../chain.js';
import { sendJson } from '../json.js';
import { retryAfterOfRefused } from '../refused-players.js';
import { jsonBody } from '../middleware/json-body.js';
import type { AppState } from '../state.js';
import { compile } from '../validate.js';
import { markReplayed, writeOrigin } from '../write-origin.js';
import { userIdOf } from './data.js';
import { messageJson } from './messages.js';

interface OpInput {
  op: 'set' | 'increment' | 'delete';
  key: string;
  value?: unknown;
  amount?: number;
  defaultValue?: number;
}
interface PlayerInput {
  userId: string | number;
  ops: OpInput[];
  ifVersion?: number;
  sessionId?: string;
  release?: boolean;
  ackMessages?: string[];
}
const validateOne = compile<PlayerInput>(batchBody);
const validateMany = compile<{ players: PlayerInput[] }>(multiBatchBody);

/** The checks a schema cannot express: each op's fields for its kind, each key once, a value's depth. */
function toRequest(input: PlayerInput, at: string, maxDepth: number): PlayerWriteRequest {
  const seen = new Set<string>();
  const ops: Op[] = input.ops.map((op, i) => {
    const where = `${at}ops[${i}]`;
    if (seen.has(op.key)) throw badRequest(`Invalid field "${where}.key" in body: key "${op.key}" appears twice in one batch`);
    seen.add(op.key);
    if (op.op === 'set') {
      if (op.amount !== undefined || op.defaultValue !== undefined) {
        throw badRequest(`Invalid field "${where}" in body: a set takes key and value only`);
      }
      if (op.value === undefined) throw badRequest(`Missing field "${where}.value" in body`);
      const problem = checkValue(op.value, maxDepth);
      if (problem) throw badRequest(`Invalid field "${where}.value" in body: ${problem}`);
      return { op: 'set', key: op.key, valueJson: JSON.stringify(op.value) };
    }
    if (op.value !== undefined) throw badRequest(`Invalid field "${where}.value" in body: only a set takes a value`);
    if (op.op === 'increment') {
      return { op: 'increment', key: op.key, amount: op.amount ?? 1, defaultValue: op.defaultValue ?? 0 };
    }
    if (op.amount !== undefined || op.defaultValue !== undefined) {
      throw badRequest(`Invalid field "${where}" in body: a delete takes key only`);
    }
    return { op: 'delete', key: op.key };
  });
  if (ops.length === 0 && input.sessionId === undefined && (input.ackMessages ?? []).length === 0) {
    throw badRequest(`Invalid field "${at}ops" in body: at least one op, unless sessionId is given (to renew or release) or ackMessages`);
  }
  if (input.release && input.sessionId === undefined) {
    throw badRequest(`Invalid field "${at}release" in body: release needs the sessionId`);
  }
  return {
    userId: userIdOf(input.userId, `${at}userId`),
    write: {
      ops,
      ifVersion: input.ifVersion,
      sessionId: input.sessionId,
      release: input.release,
      ackMessages: input.ackMessages,
      // The session holding the player is handed what arrived for it since its last save; a
      // save that releases it is handed none (they wait for the next session).
      deliverMessages: input.sessionId !== undefined && input.release !== true,
    },
    kind: 'batch',
    opKeys: ops.map((op) => op.key),
  };
}

/** `,"messages":[...]` of an answer to a write that holds the player's session, or nothing. */
function messagesMember(request: PlayerWriteRequest, applied: Applied): string {
  if (!request.write.deliverMessages) return '';
  return `,"messages":[${applied.messages.map(messageJson).join(',')}]`;
}

/** The results array of an applied batch, as JSON text (values echoed from the request). */
function resultsJson(request: PlayerWriteRequest, applied: Applied): string {
  const parts = request.write.ops.map((op, i) => {
    const key = JSON.stringify(op.key);
    const result = applied.results[i]!;
    if (op.op === 'set') return `{"key":${key},"value":${op.valueJson},"updated_at":"${updatedAt(result)}"}`;
    if (op.op === 'increment') return `{"key":${key},"value":${JSON.stringify(Number(result))}}`;
    return `{"key":${key},"deleted":${Number(result)}}`;
  });
  return `[${parts.join(',')}]`;
}

export interface BatchRouteDeps {
  readonly guard: Middleware<AppState>;
  /** Runs once the body has arrived: the key is checked again before the write (recheck-key.ts). */
  readonly recheck: Middleware<AppState>;
  readonly writes: PlayerWrites;
  readonly config: Pick<Config, 'limits'>;
}

export function batchRoutes(router: Router<AppState>, { guard, recheck, writes, config }: BatchRouteDeps): void {
  const body = chain(jsonBody(config.limits.maxBodyBytes), recheck);
  const maxDepth = config.limits.maxValueDepth;

  router.post('/data/batch', chain(guard, requireWriteScope, body, async (ctx) => {
    const raw = ctx.request.body as Record<string, unknown> | undefined;
    if (raw !== null && typeof raw === 'object' && !Array.isArray(raw) && 'players' in raw) {
      const input = validateMany('body', raw);
      const requests = input.players.map((player, i) => toRequest(player, `players[${i}].`, maxDepth));
      const seen = new Set<string>();
      requests.forEach((request, i) => {
        if (seen.has(request.userId)) {
          throw badRequest(`Invalid field "players[${i}].userId" in body: player ${request.userId} appears twice in one batch`);
        }
        seen.add(request.userId);
      });
      const outcomes = await writes.many(writeOrigin(ctx, input), requests);
      markReplayed(ctx, outcomes.every((o) => !(o instanceof AppError) && o.replayed));
      retryAfterOfRefused(ctx, outcomes);
      const players = outcomes.map((outcome, i) => {
        const request = requests[i]!;
        const userId = JSON.stringify(request.userId);
        if (outcome instanceof AppError) {
          const { success, ...error } = errorBodyOf(outcome);
          return JSON.stringify({ userId: request.userId, success, status: outcome.status, ...error });
        }
        return `{"userId":${userId},"success":true,"version":${outcome.version},"results":${resultsJson(request, outcome)}${messagesMember(request, outcome)}}`;
      });
      return sendJson(ctx, `{"success":true,"data":{"players":[${players.join(',')}]}}`);
    }

    const input = validateOne('body', raw);
    const request = toRequest(input, '', maxDepth);
    const applied = await writes.one(writeOrigin(ctx, input), request);
    markReplayed(ctx, applied.replayed);
    sendJson(ctx, `{"success":true,"data":{"results":${resultsJson(request, applied)}${messagesMember(request, applied)}},"version":${applied.version}}`);
  }));
}
