// /messages: leave a message for a player (a gift from another server, a note from the game's
// backend), and list the ones waiting. A message is processed by the server that holds the
// player: handed to it with the join's load and with its saves' answers, acknowledged by a save
// (docs/safe-saves.md, "Messages to players"). Reading never consumes.
import type Router from '@koa/router';
import type { Middleware } from 'koa';
import { parse as parseQuery } from 'node:querystring';
import type { Config } from '../../config.js';
import { isoTime } from '../../domain/entry.js';
import { checkMessage } from '../../domain/value.js';
import { badRequest } from '../../errors.js';
import type { PlayerMessages } from '../../saves/player-messages.js';
import { messagesQuery, sendMessageBody } from '../../schemas/data.js';
import { requireWriteScope } from '../middleware/authenticate.js';
import { heavyFromTheStart } from '../byte-budget.js';
import { chain } from '../chain.js';
import { sendJson } from '../json.js';
import { jsonBody } from '../middleware/json-body.js';
import type { AppState } from '../state.js';
import { compile } from '../validate.js';
import { markReplayed, writeOrigin } from '../write-origin.js';
import { userIdOf } from './data.js';

const validateSend = compile<{ userId: string | number; message: unknown; ttlSeconds?: number }>(sendMessageBody);
const validateList = compile<{ userId: string }>(messagesQuery);

export interface MessageRouteDeps {
  readonly guard: Middleware<AppState>;
  readonly recheck: Middleware<AppState>;
  readonly messages: PlayerMessages;
  readonly config: Pick<Config, 'limits' | 'messages'>;
}

/** A waiting message as an answer shows it (the message's own JSON text kept as it was stored). */
export function messageJson(m: { id: string; sentAtMs: number; messageJson: string; expiresAtMs?: number }): string {
  const expires = m.expiresAtMs === undefined ? '' : `,"expiresAt":"${isoTime(m.expiresAtMs)}"`;
  return `{"id":"${m.id}","message":${m.messageJson},"sentAt":"${isoTime(m.sentAtMs)}"${expires}}`;
}

export function messageRoutes(router: Router<AppState>, { guard, recheck, messages, config }: MessageRouteDeps): void {
  const body = chain(jsonBody(config.limits.maxBodyBytes), recheck);

  router.post('/messages', chain(guard, requireWriteScope, body, async (ctx) => {
    const input = validateSend('body', ctx.request.body);
    if (input.message === undefined) throw badRequest('Missing field "message" in body');
    const problem = checkMessage(input.message, config.limits.maxValueDepth);
    if (problem) throw badRequest(`Invalid field "message" in body: ${problem}`);
    if (input.ttlSeconds !== undefined && input.ttlSeconds > config.messages.maxTtlSeconds) {
      throw badRequest(`Invalid field "ttlSeconds" in body: at most ${config.messages.maxTtlSeconds} (MESSAGE_MAX_TTL_SECONDS)`);
    }
    const sent = await messages.send(writeOrigin(ctx, input), userIdOf(input.userId), JSON.stringify(input.message), input.ttlSeconds);
    markReplayed(ctx, sent.replayed);
    sendJson(
      ctx,
      `{"success":true,"data":{"messageId":"${sent.messageId}","sentAt":"${isoTime(sent.sentAtMs)}","expiresAt":"${isoTime(sent.expiresAtMs)}"}}`,
    );
  }));

  router.get('/messages', chain(guard, async (ctx) => {
    const query = validateList('query', parseQuery(ctx.querystring));
    // Up to 100 messages of 16 KiB, a size known only once read: every such read is heavy.
    await heavyFromTheStart(ctx);
    const waiting = await messages.waiting(ctx.state.principal!.workspace.id, userIdOf(query.userId));
    sendJson(ctx, `{"success":true,"data":{"messages":[${waiting.map(messageJson).join(',')}]}}`);
  }));
}
