// Applies the public API's leaderboard writes: the storage quota (a write that may add entries
// is refused at or over it; a delete always passes), the request's idempotency key claimed in
// its workspace (saves/idempotency.ts, as player writes claim theirs), the board's script, and
// the entries it added or removed counted into the workspace's storage total.
import type { Period } from '../domain/periods.js';
import { AppError, ErrorCode } from '../errors.js';
import { REPLAYED_HEADER, keyReused, withClaim, type IdempotencyClaims } from '../saves/idempotency.js';
import type { WriteOrigin } from '../saves/player-writes.js';
import type { StorageQuota } from '../saves/storage-quota.js';
import { BOARD_ENTRY_BYTES } from '../store/boards/board-memory.js';
import type { BoardOp, BoardRefusal, BoardWriteReply, LeaderboardStore } from '../store/boards/leaderboard-store.js';
import type { StorageUsage } from '../store/workspaces/storage-usage.js';

/** About what an answer a board's script keeps for an Idempotency-Key costs Redis (store/workspaces/idempotency-claims.ts keptRecordBytes). */
const BOARD_KEPT_ANSWER_BYTES = 200;

export type BoardWriteOutcome =
  | { readonly status: 'scored'; readonly scores: ReadonlyArray<readonly [Period, string]>; readonly replayed: boolean }
  | { readonly status: 'deleted'; readonly deleted: boolean; readonly replayed: boolean };

/** The error of a board script's refusal, as its first answer said it (and a replay repeats). */
function refusalError(refusal: BoardRefusal, replayed: boolean, maxEntries: number): AppError {
  const headers = replayed ? { headers: { [REPLAYED_HEADER]: 'true' } } : {};
  switch (refusal.code) {
    case ErrorCode.BOARD_FULL:
      return new AppError(
        refusal.code,
        `The ${refusal.period} period of this leaderboard holds ${maxEntries} entries, the most it may (LEADERBOARD_MAX_ENTRIES): a new player cannot be added; existing ones can still be written`,
        headers,
      );
    case ErrorCode.NUMBER_OUT_OF_RANGE:
      return new AppError(refusal.code, `The increment would leave the finite number range in the ${refusal.period} period`, headers);
    case ErrorCode.IDEMPOTENCY_KEY_REUSED:
      return keyReused();
  }
}

export class BoardWrites {
  constructor(
    private readonly store: LeaderboardStore,
    private readonly claims: IdempotencyClaims,
    private readonly quota: StorageQuota,
    private readonly usage: StorageUsage,
  ) {}

  /** One write of the public API; its refusal thrown (as the first answer, when replayed). */
  async write(origin: WriteOrigin, board: string, userId: string, op: BoardOp): Promise<BoardWriteOutcome> {
    // A set or increment may add an entry (only its script knows); a delete always passes.
    const verdict = this.quota.verdict(origin.workspaceId, origin.plan, op.op !== 'delete', origin.nowMs);
    const reply = await withClaim(this.claims, origin, verdict, (claim) =>
      this.store.write(origin.workspaceId, board, userId, op, {
        nowMs: origin.nowMs,
        idempotency: claim,
      }),
    );
    // The board's script kept this answer under the key (besides the claim, counted by the claim).
    if (origin.idempotencyKey !== undefined && !reply.replayed) {
      this.quota.recordKept(origin.workspaceId, BOARD_KEPT_ANSWER_BYTES, origin.nowMs + this.store.limits.idempotencyTtlSeconds * 1000);
    }
    return this.outcome(origin.workspaceId, reply);
  }

  private outcome(workspaceId: string, reply: BoardWriteReply): BoardWriteOutcome {
    if (reply.status === 'refused') throw refusalError(reply.refusal, reply.replayed, this.store.limits.maxEntries);
    if (!reply.replayed && reply.entriesDelta !== 0) this.usage.recordBoards(workspaceId, reply.entriesDelta * BOARD_ENTRY_BYTES);
    return reply.status === 'scored'
      ? { status: 'scored', scores: reply.scores, replayed: reply.replayed }
      : { status: 'deleted', deleted: reply.deleted, replayed: reply.replayed };
  }
}
