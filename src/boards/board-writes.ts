// Applies the public API's leaderboard writes: the storage quota (a write that may add entries
// is refused at or over it; a delete always passes), the request's idempotency key claimed in
// its workspace (saves/idempotency.ts, as player writes claim theirs), the board's script, and
// the entries it added or removed counted into the workspace's storage total.
import type { Period } from '../domain/periods.js';
import { AppError } from '../errors.js';
import type { ClaimedKey, IdempotencyClaims } from '../saves/idempotency.js';
import { REPLAYED_HEADER, keyReused } from '../saves/idempotency.js';
import type { WriteOrigin } from '../saves/player-writes.js';
import type { StorageQuota } from '../saves/storage-quota.js';
import type { PlayerWrite } from '../store/players/player-data.js';
import { BOARD_ENTRY_BYTES } from '../store/boards/board-memory.js';
import type { BoardOp, BoardWriteReply, LeaderboardStore } from '../store/boards/leaderboard-store.js';
import { BoardScriptCode, ERROR_OF_BOARD_CODE, unexpectedScriptReply } from '../store/redis/scripts.js';
import type { StorageUsage } from '../store/workspaces/storage-usage.js';

/**
 * What StorageQuota.check judges a write by: any write that is not a delete may add data. A
 * board's set or increment may add an entry, which is only known inside its script.
 */
const MAY_ADD: PlayerWrite = { ops: [{ op: 'increment', key: 'leaderboard', amount: 0, defaultValue: 0 }] };

export type BoardWriteOutcome =
  | { readonly status: 'scored'; readonly scores: ReadonlyArray<readonly [Period, string]>; readonly replayed: boolean }
  | { readonly status: 'deleted'; readonly deleted: boolean; readonly replayed: boolean };

/** The refusal of a board script's reply, as its first answer said it (and a replay repeats). */
function refusal(code: number, period: Period | undefined, replayed: boolean, maxEntries: number): AppError {
  const headers = replayed ? { headers: { [REPLAYED_HEADER]: 'true' } } : {};
  switch (code) {
    case BoardScriptCode.BOARD_FULL:
      return new AppError(
        ERROR_OF_BOARD_CODE[code]!,
        `The ${period} period of this leaderboard holds ${maxEntries} entries, the most it may (LEADERBOARD_MAX_ENTRIES): a new player cannot be added; existing ones can still be written`,
        headers,
      );
    case BoardScriptCode.NUMBER_OUT_OF_RANGE:
      return new AppError(ERROR_OF_BOARD_CODE[code]!, `The increment would leave the finite number range in the ${period} period`, headers);
    case BoardScriptCode.IDEMPOTENCY_KEY_REUSED:
      return keyReused();
    default:
      return unexpectedScriptReply([code]);
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
    const checked = op.op === 'delete' ? undefined : this.quota.check(origin.workspaceId, origin.plan, MAY_ADD, origin.nowMs);
    const reply = await this.claimed(origin, checked, (claim) =>
      this.store.write(origin.workspaceId, board, userId, op, {
        nowMs: origin.nowMs,
        idempotency: claim,
      }),
    );
    return this.outcome(origin.workspaceId, reply);
  }

  /**
   * The write path's call for a board that follows a player key (LeaderboardStore.applyFollowed),
   * with the entries it adds or removes counted into the workspace's storage total.
   */
  async applyFollowed(workspaceId: string, board: string, userId: string, valueJson: string | null, version: number, nowMs: number): Promise<BoardWriteOutcome> {
    return this.outcome(workspaceId, await this.store.applyFollowed(workspaceId, board, userId, valueJson, version, nowMs));
  }

  private outcome(workspaceId: string, reply: BoardWriteReply): BoardWriteOutcome {
    if (reply.status === 'refused') throw refusal(reply.code, reply.period, reply.replayed, this.store.limits.maxEntries);
    if (!reply.replayed && reply.entriesDelta !== 0) this.usage.record(workspaceId, reply.entriesDelta * BOARD_ENTRY_BYTES, 0);
    return reply.status === 'scored'
      ? { status: 'scored', scores: reply.scores, replayed: reply.replayed }
      : { status: 'deleted', deleted: reply.deleted, replayed: reply.replayed };
  }

  /**
   * Runs `work` once the quota check passed and the idempotency key (if any) is claimed, the two
   * sent to Redis together (as saves/player-writes.ts does for players: one round trip, then the write).
   */
  private async claimed<T>(origin: WriteOrigin, checked: void | Promise<void>, work: (claim: ClaimedKey | undefined) => Promise<T>): Promise<T> {
    if (origin.idempotencyKey === undefined) {
      if (checked) await checked;
      return work(undefined);
    }
    const quota = checked ? checked.then(() => undefined, (err: unknown) => err) : undefined;
    const claim = await this.claims.claim(origin.workspaceId, origin.idempotencyKey, origin.path, origin.body);
    try {
      const refused = await quota;
      if (refused !== undefined) throw refused;
      return await work(claim);
    } finally {
      claim.done();
    }
  }
}
