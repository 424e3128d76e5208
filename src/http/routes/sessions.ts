// /sessions/acquire, /renew, /release: the lease that says which game server owns a player
// (docs/safe-saves.md, "Session locks"). The lock lives with the player and every write checks
// it in the same step (lua/write-player.lua); these calls only take, extend and end it.
import type Router from '@koa/router';
import type { Middleware } from 'koa';
import { customAlphabet } from 'nanoid';
import type { Config } from '../../config.js';
import { isoTime } from '../../domain/entry.js';
import { AppError, badRequest, ErrorCode, errorBodyOf } from '../../errors.js';
import { toAppError } from '../middleware/errors.js';
import { heldOrThrow, releasedOrThrow, type Held } from '../../saves/outcomes.js';
import type { PlayerWrites } from '../../saves/player-writes.js';
import { acquireBody, multiAcquireBody, releaseBody, renewBody } from '../../schemas/data.js';
import type { PlayerDataStore, ReadAllResult } from '../../store/players/player-data.js';
import type { SessionRequest } from '../../store/players/script-protocol.js';
import { requireWriteScope } from '../middleware/authenticate.js';
import { chargeRead, heavyFromTheStart } from '../byte-budget.js';
import { chain } from '../chain.js';
import { sendJson } from '../json.js';
import { jsonBody } from '../middleware/json-body.js';
import { retryAfterOfRefused } from '../refused-players.js';
import type { AppState } from '../state.js';
import { compile } from '../validate.js';
import { markReplayed, writeOrigin } from '../write-origin.js';
import { userIdOf } from './data.js';
import { messageJson } from './messages.js';

const newSessionId = (() => {
  const random = customAlphabet('0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz', 22);
  return () => `ses_${random()}`;
})();

type UserIdInput = string | number;
const validateAcquire = compile<{ userId: UserIdInput; owner: string; ttlSeconds?: number; steal?: boolean; load?: boolean }>(
  acquireBody,
);
const validateMultiAcquire = compile<{ players: Array<string | number>; owner: string; ttlSeconds?: number; steal?: boolean; load?: boolean }>(
  multiAcquireBody,
);
const validateRenew = compile<{ userId: UserIdInput; sessionId: string; ttlSeconds?: number }>(renewBody);
const validateRelease = compile<{ userId: UserIdInput; sessionId: string }>(releaseBody);

export interface SessionRouteDeps {
  readonly guard: Middleware<AppState>;
  /** Runs once the body has arrived: the key is checked again before the write (recheck-key.ts). */
  readonly recheck: Middleware<AppState>;
  readonly players: PlayerDataStore;
  readonly writes: PlayerWrites;
  readonly config: Pick<Config, 'limits' | 'sessions'>;
}

function valuesJson(all: ReadAllResult, maxPlayerBytes: number): string {
  if (!all.complete) {
    throw new AppError(
      ErrorCode.PLAYER_TOO_LARGE,
      `Session acquired, but the player holds ${all.bytes} bytes, more than one answer carries (${maxPlayerBytes}): read its keys one at a time`,
      { extras: { version: all.version } },
    );
  }
  return `{${all.entries.map(([key, entry]) => `${JSON.stringify(key)}:${entry.valueJson}`).join(',')}}`;
}

/**
 * An acquire whose session was taken but whose load was refused (429 past the byte budget, a
 * storage error): the refusal says so and hands the session, which stays as taken, since a
 * retry with the same Idempotency-Key replays it (docs/safe-saves.md, "Acquire with load").
 */
function loadRefused(err: unknown, held: Held, maxBodyBytes: number): AppError {
  const error = toAppError(err, maxBodyBytes);
  if (!error.expose || error.code === ErrorCode.PLAYER_TOO_LARGE) return error;
  const { sessionId, owner, expiresAtMs } = held.session;
  return new AppError(
    error.code,
    `Session ${sessionId} acquired, but the player was not loaded: ${error.message}. The session is held until ${isoTime(expiresAtMs)}: acquire again with the same owner (or the same Idempotency-Key) to load it, or release it`,
    { headers: error.headers, extras: { version: held.version, data: { ...error.extras.data, sessionId, owner, expiresAt: isoTime(expiresAtMs) } } },
  );
}

export function sessionRoutes(router: Router<AppState>, { guard, recheck, players, writes, config }: SessionRouteDeps): void {
  const body = chain(jsonBody(config.limits.maxBodyBytes), recheck);
  const context = { maxKeysPerPlayer: config.limits.maxKeysPerPlayer, maxPlayerBytes: config.limits.maxPlayerBytes };

  /** The session's fields, and after an acquire what the service keeps beside them and what it handed over. */
  const sessionFields = (userId: string, held: Held, values?: string) => {
    const metadata = held.metadata
      ? `,"metadata":{"firstSessionAt":"${isoTime(held.metadata.firstSessionAtMs)}","sessionCount":${held.metadata.sessionCount}}`
      : '';
    const messages = held.messages !== undefined && values !== undefined ? `,"messages":[${held.messages.map(messageJson).join(',')}]` : '';
    return (
      `"sessionId":${JSON.stringify(held.session.sessionId)},"userId":${JSON.stringify(userId)},` +
      `"owner":${JSON.stringify(held.session.owner)},"expiresAt":"${isoTime(held.session.expiresAtMs)}"` +
      `${values === undefined ? '' : `,"values":${values}`}${messages}${metadata}`
    );
  };
  const sessionAnswer = (userId: string, held: Held, values?: string) =>
    `{"success":true,"data":{${sessionFields(userId, held, values)}},"version":${held.version}}`;

  type AcquireInput = { owner: string; ttlSeconds?: number; steal?: boolean; load?: boolean };
  const acquireRequest = (input: AcquireInput) => (): SessionRequest => ({
    action: 'acquire',
    sessionId: newSessionId(),
    owner: input.owner,
    ttlMs: (input.ttlSeconds ?? config.sessions.defaultTtlSeconds) * 1000,
    steal: input.steal === true,
    deliverMessages: input.load === true,
  });
  // Sent in the same turn as the acquire, so both leave in one write: a join costs one round
  // trip. Read after the lock is taken, so no other session's write can come between. A large
  // player is charged to the byte budget before it is read, and waits for the workspace's heavy
  // turn; past the budget its answer is a 429 that hands the session taken (loadRefused).
  const load = (ctx: Parameters<typeof chargeRead>[0], workspaceId: string, userId: string) =>
    players.readAll(workspaceId, userId, undefined, (bytes) => chargeRead(ctx, bytes));

  router.post('/sessions/acquire', chain(guard, requireWriteScope, body, async (ctx) => {
    const raw = ctx.request.body as Record<string, unknown> | undefined;
    if (raw !== null && typeof raw === 'object' && !Array.isArray(raw) && 'players' in raw) {
      const input = validateMultiAcquire('body', raw);
      const userIds = input.players.map((id, i) => userIdOf(id, `players[${i}]`));
      const seen = new Set<string>();
      userIds.forEach((id, i) => {
        if (seen.has(id)) throw badRequest(`Invalid field "players[${i}]" in body: player ${id} appears twice in one request`);
        seen.add(id);
      });
      const origin = writeOrigin(ctx, input);
      // Up to 100 players read whole, each too small to be heavy alone: the request is heavy
      // (docs/reliability.md, "Many small parts in one answer").
      const loading = input.load === true && userIds.length > 1;
      if (loading) await heavyFromTheStart(ctx);
      const next = acquireRequest(input);
      const sessions = await writes.sessions(origin, userIds, () => next());
      markReplayed(ctx, sessions.every((s) => !(s instanceof AppError) && s.replayed));
      const held = sessions.map((reply) => {
        try {
          if (reply instanceof AppError) throw reply;
          return heldOrThrow(reply, context);
        } catch (err) {
          return toAppError(err, config.limits.maxBodyBytes);
        }
      });
      // Loaded once their sessions are taken: no other session's write can come between. The
      // answer pays for what was not charged before its read (each player under LARGE_BYTES).
      const loaded = input.load === true
        ? await Promise.allSettled(userIds.map((id, i) => (held[i] instanceof AppError ? undefined : load(ctx, origin.workspaceId, id))))
        : [];
      const refused: AppError[] = [];
      const answers = held.map((h, i) => {
        const userId = userIds[i]!;
        try {
          if (h instanceof AppError) throw h;
          const values = loaded[i];
          if (values?.status === 'rejected') throw loadRefused(values.reason, h, config.limits.maxBodyBytes);
          const valuesText = values?.value === undefined ? undefined : valuesJson(values.value, config.limits.maxPlayerBytes);
          return `{"userId":${JSON.stringify(userId)},"success":true,"version":${h.version},${sessionFields(userId, h, valuesText).replace(`"userId":${JSON.stringify(userId)},`, '')}}`;
        } catch (err) {
          const error = toAppError(err, config.limits.maxBodyBytes);
          refused.push(error);
          const { success, ...envelope } = errorBodyOf(error);
          return JSON.stringify({ userId, success, status: error.status, ...envelope });
        }
      });
      retryAfterOfRefused(ctx, refused);
      return sendJson(ctx, `{"success":true,"data":{"players":[${answers.join(',')}]}}`);
    }

    const input = validateAcquire('body', raw);
    const userId = userIdOf(input.userId);
    const origin = writeOrigin(ctx, input);
    const acquired = writes.session(origin, userId, acquireRequest(input)());
    const loaded = input.load === true ? load(ctx, origin.workspaceId, userId) : undefined;
    const [session, all] = await Promise.allSettled([acquired, loaded]);
    if (session.status === 'rejected') throw session.reason;
    const held = heldOrThrow(session.value, context);
    if (all.status === 'rejected') throw loadRefused(all.reason, held, config.limits.maxBodyBytes);
    markReplayed(ctx, held.replayed);
    sendJson(ctx, sessionAnswer(userId, held, all.value === undefined ? undefined : valuesJson(all.value, config.limits.maxPlayerBytes)));
  }));

  router.post('/sessions/renew', chain(guard, requireWriteScope, body, async (ctx) => {
    const input = validateRenew('body', ctx.request.body);
    const userId = userIdOf(input.userId);
    const held = heldOrThrow(
      await writes.session(writeOrigin(ctx, input), userId, {
        action: 'renew',
        sessionId: input.sessionId,
        ttlMs: input.ttlSeconds === undefined ? undefined : input.ttlSeconds * 1000,
      }),
      context,
    );
    markReplayed(ctx, held.replayed);
    sendJson(ctx, sessionAnswer(userId, held));
  }));

  router.post('/sessions/release', chain(guard, requireWriteScope, body, async (ctx) => {
    const input = validateRelease('body', ctx.request.body);
    const userId = userIdOf(input.userId);
    const outcome = releasedOrThrow(
      await writes.session(writeOrigin(ctx, input), userId, { action: 'release', sessionId: input.sessionId }),
      context,
    );
    markReplayed(ctx, outcome.replayed);
    sendJson(ctx, `{"success":true,"data":{"released":${outcome.released}},"version":${outcome.version}}`);
  }));
}
