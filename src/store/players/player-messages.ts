// A player's waiting messages (lua/send-message.lua, lua/includes/inbox.lua): left by a server,
// the admin API or the CLI for a player who may be on another server or offline, kept in the
// player's own slot until a save acknowledges them (lua/write-player.lua) or they expire.
import { keys } from '../keys.js';
import { readAtRedisNow } from '../redis/clock.js';
import type { RedisClient } from '../redis/redis.js';
import { runPlayerScript, type KeptReply } from './player-scripts.js';
import { decodeSendMessageReply, sendMessageArgs, type SendMessageReply, type WriteContext } from './script-protocol.js';

export interface WaitingMessage {
  readonly id: string;
  readonly sentAtMs: number;
  readonly expiresAtMs: number;
  readonly messageJson: string;
  /** What it holds in the inbox (id + stored value), as the storage totals count it. */
  readonly bytes: number;
}

const SEQUENCE = '#';

/** One stored message (`<sent ms>|<expires ms>|<JSON>`), or undefined when it is not in that form. */
function parseMessage(id: string, value: string): WaitingMessage | undefined {
  const parsed = /^(\d+)\|(\d+)\|(.*)$/s.exec(value);
  if (!parsed) return undefined;
  return { id, sentAtMs: Number(parsed[1]), expiresAtMs: Number(parsed[2]), messageJson: parsed[3]!, bytes: id.length + value.length };
}

export class PlayerMessagesStore {
  constructor(
    private readonly redis: RedisClient,
    private readonly idempotencyTtlSeconds: number,
  ) {}

  /** Leaves a message (lua/send-message.lua); OUTCOME_UNKNOWN when it was sent and no answer came. */
  async send(
    workspaceId: string,
    userId: string,
    message: { readonly json: string; readonly ttlMs: number; readonly maxWaiting: number },
    idempotency?: WriteContext['idempotency'],
  ): Promise<KeptReply<SendMessageReply>> {
    return runPlayerScript(
      this.redis,
      workspaceId,
      userId,
      idempotency,
      (idempotencyKey) =>
        this.redis.sendMessage(
          keys.playerInbox(workspaceId, userId),
          idempotencyKey,
          ...sendMessageArgs(message.json, message.ttlMs, message.maxWaiting, idempotency, this.idempotencyTtlSeconds),
        ),
      decodeSendMessageReply,
    );
  }

  /** The messages waiting for the player, oldest first, by Redis's clock (expired ones are not shown). */
  async list(workspaceId: string, userId: string): Promise<WaitingMessage[]> {
    const [nowMs, all] = await readAtRedisNow<[Record<string, string>]>(this.redis, (multi) => multi.hgetall(keys.playerInbox(workspaceId, userId)));
    const waiting: WaitingMessage[] = [];
    for (const [id, value] of Object.entries(all)) {
      if (id === SEQUENCE) continue;
      const message = parseMessage(id, value);
      if (message && message.expiresAtMs > nowMs) waiting.push(message);
    }
    return waiting.sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
  }

  /** Removes waiting messages (all when `ids` is not given); answers those it removed. */
  async remove(workspaceId: string, userId: string, ids?: readonly string[]): Promise<WaitingMessage[]> {
    const inbox = keys.playerInbox(workspaceId, userId);
    const found = ids === undefined ? await this.list(workspaceId, userId) : await this.pick(inbox, ids);
    if (found.length > 0) await this.redis.hdel(inbox, ...found.map((m) => m.id));
    return found;
  }

  private async pick(inbox: string, ids: readonly string[]): Promise<WaitingMessage[]> {
    if (ids.length === 0) return [];
    const values = await this.redis.hmget(inbox, ...ids);
    return ids.flatMap((id, i) => {
      const message = values[i] ? parseMessage(id, values[i]!) : undefined;
      return message ? [message] : [];
    });
  }
}
