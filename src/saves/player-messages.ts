// Messages to players (docs/safe-saves.md, "Messages to players"): a gift or a note left for a
// player who may be on another server or offline. Sending is a write like any other: the
// quota's verdict (it may add data), the request's idempotency key, the script (the message
// waits in the player's slot), and what it keeps counted. Processing is a save's: it
// acknowledges the ids in its own step (saves/player-writes.ts, lua/write-player.lua).
import type { Config } from '../config.js';
import { AppError, ErrorCode } from '../errors.js';
import type { PlayerMessagesStore, WaitingMessage } from '../store/players/player-messages.js';
import { withClaim, type IdempotencyClaims } from './idempotency.js';
import { refusal } from './outcomes.js';
import type { StorageQuota } from './storage-quota.js';
import type { WriteOrigin } from './player-writes.js';

export interface SentMessage {
  readonly messageId: string;
  readonly sentAtMs: number;
  readonly expiresAtMs: number;
  readonly replayed: boolean;
}

export class PlayerMessages {
  constructor(
    private readonly store: PlayerMessagesStore,
    private readonly claims: IdempotencyClaims,
    private readonly quota: StorageQuota,
    private readonly limits: Config['messages'],
  ) {}

  /** Leaves `messageJson` for the player; 413 past MESSAGE_MAX_BYTES, 409 INBOX_FULL past the most waiting. */
  send(origin: WriteOrigin, userId: string, messageJson: string, ttlSeconds: number | undefined): Promise<SentMessage> {
    const bytes = Buffer.byteLength(messageJson);
    if (bytes > this.limits.maxBytes) {
      throw new AppError(ErrorCode.PAYLOAD_TOO_LARGE, `The message is ${bytes} bytes as JSON, more than the ${this.limits.maxBytes} a message may hold (MESSAGE_MAX_BYTES)`);
    }
    const ttlMs = (ttlSeconds ?? this.limits.defaultTtlSeconds) * 1000;
    const verdict = this.quota.verdict(origin.workspaceId, origin.plan, true, origin.nowMs);
    return withClaim(this.claims, origin, verdict, async (claim) => {
      const reply = await this.store.send(origin.workspaceId, userId, { json: messageJson, ttlMs, maxWaiting: this.limits.maxWaiting }, claim);
      if (claim) this.quota.recordKept(origin.workspaceId, reply.keptBytes, origin.nowMs + claim.ttlSeconds * 1000);
      if (!reply.reply.sent) throw refusal(reply.reply.refusal, reply.replayed, { maxKeysPerPlayer: 0, maxPlayerBytes: 0 });
      if (!reply.replayed) this.quota.recordMessages(origin.workspaceId, reply.reply.bytes, reply.reply.expiresAtMs);
      return { messageId: reply.reply.id, sentAtMs: reply.reply.sentAtMs, expiresAtMs: reply.reply.expiresAtMs, replayed: reply.replayed };
    });
  }

  /** The messages waiting for the player, oldest first. Reading never consumes. */
  waiting(workspaceId: string, userId: string): Promise<WaitingMessage[]> {
    return this.store.list(workspaceId, userId);
  }
}
