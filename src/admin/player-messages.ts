// A player's waiting messages for operators, shared by the CLI, the admin API and the console:
// list them, leave one (a gift or a note from support), and delete some or all. Listing shows a
// person what was sent to a player, so it is audited like a read of the player's data; the
// messages themselves never go into the audit trail. What a send or a delete changes is added
// to the workspace's storage totals at once.
import { isoTime } from '../domain/entry.js';
import { checkMessage } from '../domain/value.js';
import { AppError, badRequest, ErrorCode } from '../errors.js';
import { refusal } from '../saves/outcomes.js';
import type { Config } from '../config.js';
import type { PlayerMessagesStore, WaitingMessage } from '../store/players/player-messages.js';
import { MESSAGE_ID } from '../store/players/script-protocol.js';
import { addToStorageTotals, expiryHourOf } from '../store/workspaces/storage-usage.js';
import type { AdminContext } from './context.js';
import { parseUserId } from './inputs.js';

export interface AdminMessage {
  readonly id: string;
  readonly message: unknown;
  readonly sentAt: string;
  readonly expiresAt: string;
}

export interface PlayerMessages {
  readonly userId: string;
  /** Waiting, oldest first. */
  readonly messages: AdminMessage[];
}

export interface SentAdminMessage {
  readonly userId: string;
  readonly messageId: string;
  readonly sentAt: string;
  readonly expiresAt: string;
}

const target = (workspaceId: string, userId: string) => `player:${workspaceId}/${userId}`;

const shown = (m: WaitingMessage): AdminMessage => ({
  id: m.id,
  message: JSON.parse(m.messageJson) as unknown,
  sentAt: isoTime(m.sentAtMs),
  expiresAt: isoTime(m.expiresAtMs),
});

/** Bytes by the hour they stop counting, negative: what a delete takes off the totals. */
function removedByHour(removed: readonly WaitingMessage[]): Map<number, number> {
  const byHour = new Map<number, number>();
  for (const m of removed) byHour.set(expiryHourOf(m.expiresAtMs), (byHour.get(expiryHourOf(m.expiresAtMs)) ?? 0) - m.bytes);
  return byHour;
}

export class MessageOperations {
  constructor(
    private readonly ctx: AdminContext,
    private readonly store: PlayerMessagesStore,
    private readonly limits: Config['messages'],
  ) {}

  async list(workspaceId: string, rawUserId: string | number): Promise<PlayerMessages> {
    await this.ctx.requireWorkspace(workspaceId);
    const userId = parseUserId(rawUserId);
    const waiting = await this.store.list(workspaceId, userId);
    await this.ctx.audit('player.messages.view', target(workspaceId, userId), { workspaceId, details: { messages: waiting.length } });
    return { userId, messages: waiting.map(shown) };
  }

  /** Leaves a message as a game server would (the same limits), sent by the operator. */
  async send(workspaceId: string, rawUserId: string | number, message: unknown, ttlSeconds?: number): Promise<SentAdminMessage> {
    await this.ctx.requireWorkspace(workspaceId);
    const userId = parseUserId(rawUserId);
    if (message === undefined) throw badRequest('Missing field "message"');
    const problem = checkMessage(message, this.ctx.maxValueDepth);
    if (problem) throw badRequest(`Invalid message: ${problem}`);
    const ttl = ttlSeconds ?? this.limits.defaultTtlSeconds;
    if (!Number.isInteger(ttl) || ttl < 60 || ttl > this.limits.maxTtlSeconds) {
      throw badRequest(`The message's wait must be whole seconds, 60-${this.limits.maxTtlSeconds} (MESSAGE_MAX_TTL_SECONDS)`);
    }
    const json = JSON.stringify(message);
    const bytes = Buffer.byteLength(json);
    if (bytes > this.limits.maxBytes) {
      throw new AppError(ErrorCode.PAYLOAD_TOO_LARGE, `The message is ${bytes} bytes as JSON, more than the ${this.limits.maxBytes} a message may hold (MESSAGE_MAX_BYTES)`);
    }
    const { reply } = await this.store.send(workspaceId, userId, { json, ttlMs: ttl * 1000, maxWaiting: this.limits.maxWaiting });
    if (!reply.sent) throw refusal(reply.refusal, false, { maxKeysPerPlayer: 0, maxPlayerBytes: 0 });
    await addToStorageTotals(this.ctx.redis, workspaceId, { messages: new Map([[expiryHourOf(reply.expiresAtMs), reply.bytes]]) });
    await this.ctx.audit('player.message', target(workspaceId, userId), { workspaceId, details: { messageId: reply.id, bytes } });
    return { userId, messageId: reply.id, sentAt: isoTime(reply.sentAtMs), expiresAt: isoTime(reply.expiresAtMs) };
  }

  /** Deletes one waiting message (`id`), or all of them; answers how many it deleted. */
  async delete(workspaceId: string, rawUserId: string | number, id?: string): Promise<{ userId: string; deleted: number }> {
    await this.ctx.requireWorkspace(workspaceId);
    const userId = parseUserId(rawUserId);
    if (id !== undefined && !MESSAGE_ID.test(id)) throw badRequest(`Message id must look like msg_ and 19 digits; got "${id.slice(0, 40)}"`);
    const removed = await this.store.remove(workspaceId, userId, id === undefined ? undefined : [id]);
    if (removed.length > 0) await addToStorageTotals(this.ctx.redis, workspaceId, { messages: removedByHour(removed) });
    await this.ctx.audit('player.messages.delete', target(workspaceId, userId), { workspaceId, details: { id: id ?? null, deleted: removed.length } });
    return { userId, deleted: removed.length };
  }
}
