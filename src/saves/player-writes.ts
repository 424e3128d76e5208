// Applies the writes of the public API to players: the quota's verdict, the request's
// idempotency key claimed (when it has one), the player's script, and its reply turned into an
// outcome, with what it stored and kept counted. One player, many players (each atomic on its
// own, in parallel), and the session calls all come through here, so that the claim and the
// replay work the same for each.
import type { Plan } from '../domain/types.js';
import { WorkspaceGate } from '../domain/workspace-gate.js';
import { AppError, ErrorCode, storageUnavailable } from '../errors.js';
import type { KeptReply, PlayerDataStore } from '../store/players/player-data.js';
import {
  decodeSessionReply,
  decodeWriteReply,
  type PlayerWrite,
  type RawReply,
  type Replayable,
  type SessionReply,
  type SessionRequest,
  type WriteReply,
} from '../store/players/script-protocol.js';
import { unexpectedScriptReply } from '../store/redis/scripts.js';
import { withClaim, type ClaimedKey, type IdempotencyClaims } from './idempotency.js';
import type { PlayerIndexRecorder } from '../store/workspaces/player-index.js';
import { appliedOrThrow, type Applied, type RefusalContext } from './outcomes.js';
import type { StorageQuota } from './storage-quota.js';

/** Who writes, when, and the request's idempotency key if it carries one. */
export interface WriteOrigin {
  readonly workspaceId: string;
  /** The workspace's plan: its storage quota. */
  readonly plan: Plan;
  /** `key:<id>` for an API key, `admin:<actor>` for an operator: kept in the history. */
  readonly actor: string;
  readonly nowMs: number;
  readonly idempotencyKey?: string | undefined;
  /** The request's path and parsed body: the idempotency key's fingerprint. */
  readonly path: string;
  readonly body: unknown;
  /** Pays for the bytes a write's script read or copied inside Redis (the byte budget), after the fact. */
  readonly chargeWork?: (bytes: number) => void;
  /**
   * Throws (429) while the workspace owes the byte budget: checked again once the write has its
   * workspace's turn, since the write before it may have copied much inside Redis (WRITES_PER_WORKSPACE).
   */
  readonly refuseInDebt?: () => void;
}

/**
 * A workspace's writes (their scripts) in flight at once on an instance. What a write's script
 * copies inside Redis (a restore point of everything a delete or a batch replaces, up to a
 * whole player) is only known once it has run, and is paid for then (chargeWork); writes sent
 * side by side would all run before the first was paid for, back to back on Redis's one
 * thread. One at a time, each checks the debt its predecessor left before it runs, and another
 * workspace's command waits behind at most one of them (docs/reliability.md).
 */
export const WRITES_PER_WORKSPACE = 1;
/**
 * Longest a write waits for its workspace's turn, by default: a predecessor that runs longer has
 * timed out itself (REDIS_COMMAND_TIMEOUT_MS), so Redis is stalled; the writes queued behind it
 * answer 503 STORAGE_UNAVAILABLE (nothing sent) rather than each waiting for the one before.
 */
export const DEFAULT_TURN_WAIT_MS = 1000;

export interface PlayerWriteRequest {
  readonly userId: string;
  readonly write: PlayerWrite;
  /** Kind of write for the history: 'set', 'increment', 'delete', 'batch'. */
  readonly kind: string;
  /** The ops' keys, to name a failing op in a batch's message; absent for a single write. */
  readonly opKeys?: readonly string[];
}

export interface PlayerLimitsView {
  readonly maxKeysPerPlayer: number;
  readonly maxPlayerBytes: number;
}

/** How long a player's answer stays once the request's whole answer is kept in its claim: past any retry that read the claim before. */
export const CONSOLIDATED_PLAYER_ANSWER_MS = 60_000;

/**
 * What runs around a player's write for the places that follow it: the boards that follow a key
 * it writes (boards/followed-writes.ts, which the server hands in; this layer does not know it).
 */
export interface WriteFollowers {
  around<T>(workspaceId: string, userId: string, write: PlayerWrite, nowMs: number, run: () => Promise<T>, applied: (result: T) => boolean): Promise<T>;
}

const adds = (write: PlayerWrite) => !(write.deleteAll || write.ops.every((op) => op.op === 'delete'));

export class PlayerWrites {
  private readonly turns = new WorkspaceGate(Number.MAX_SAFE_INTEGER, WRITES_PER_WORKSPACE);

  constructor(
    private readonly store: PlayerDataStore,
    private readonly claims: IdempotencyClaims,
    private readonly limits: PlayerLimitsView,
    private readonly quota: StorageQuota,
    /** The workspaces' players lists (the console's), fed by every applied write. */
    private readonly index?: PlayerIndexRecorder,
    /** Boards that follow a player key, brought to the stored value before a write is answered. */
    private readonly follow?: WriteFollowers,
    /** Longest a write waits for its workspace's turn (the Redis command timeout). */
    private readonly turnWaitMs = DEFAULT_TURN_WAIT_MS,
  ) {}

  /** One player's write: its outcome, or its refusal thrown (as the first answer, when replayed). */
  one(origin: WriteOrigin, request: PlayerWriteRequest): Promise<Applied> {
    const verdict = this.quota.verdict(origin.workspaceId, origin.plan, adds(request.write), origin.nowMs);
    return withClaim(this.claims, origin, verdict, async (claim) => {
      const reply = await this.inTurn(origin, () => this.apply(origin, request, claim));
      if (claim) this.quota.recordKept(origin.workspaceId, reply.keptBytes, origin.nowMs + claim.ttlSeconds * 1000);
      return appliedOrThrow(reply, this.context(request));
    });
  }

  /**
   * Many players' writes, each atomic, independent of the others: an outcome or a refusal each.
   * Under an idempotency key each player's script keeps that player's answer (so a retry is
   * applied once per player, even after a crash half-way); once all are in, the request's whole
   * answer is kept in its claim, one record for the request, and each player's is shortened to
   * CONSOLIDATED_PLAYER_ANSWER_MS. A retry then finds the whole answer in the claim.
   */
  many(origin: WriteOrigin, requests: readonly PlayerWriteRequest[]): Promise<Array<Applied | AppError>> {
    // One verdict for the request: the quota is the workspace's, the same for every player.
    const verdict = this.quota.verdict(origin.workspaceId, origin.plan, requests.some((r) => adds(r.write)), origin.nowMs);
    return withClaim(this.claims, origin, verdict, async (claim) => {
      // The players' scripts run side by side, in one turn of the workspace.
      const replies = await this.inTurn(origin, () =>
        this.keptAsOne(
          origin,
          claim,
          requests.map((r) => r.userId),
          (_userId, i) => this.apply(origin, requests[i]!, claim),
          decodeWriteReply,
        ),
      );
      return replies.map((reply, i) => this.outcomeOf(reply, requests[i]!));
    });
  }

  /** A session call, under the request's idempotency key. */
  session(origin: WriteOrigin, userId: string, request: SessionRequest): Promise<Replayable<SessionReply>> {
    const verdict = this.quota.verdict(origin.workspaceId, origin.plan, false, origin.nowMs);
    return withClaim(this.claims, origin, verdict, async (claim, judged) => {
      const reply = await this.store.session(origin.workspaceId, userId, { ...request, overQuota: judged.over }, claim);
      if (claim) this.quota.recordKept(origin.workspaceId, reply.keptBytes, origin.nowMs + claim.ttlSeconds * 1000);
      return reply;
    });
  }

  /**
   * The same session call for many players (a server that opens with many at once), each on
   * its own, one request; under an idempotency key its answer is kept as one record, as many()
   * keeps a batch's. `request(userId)` makes each player's (its own new session id).
   */
  sessions(origin: WriteOrigin, userIds: readonly string[], request: (userId: string) => SessionRequest): Promise<Array<Replayable<SessionReply>>> {
    const verdict = this.quota.verdict(origin.workspaceId, origin.plan, false, origin.nowMs);
    return withClaim(this.claims, origin, verdict, (claim, judged) => {
      const action = request(userIds[0]!).action;
      return this.keptAsOne(
        origin,
        claim,
        userIds,
        (userId) => this.store.session(origin.workspaceId, userId, { ...request(userId), overQuota: judged.over }, claim),
        (raw) => decodeSessionReply(raw, action),
      );
    });
  }

  /**
   * Runs one script a player, in parallel. Under an idempotency key each player's script keeps
   * that player's answer (so a retry is applied once per player, even after a crash half-way);
   * once all are in, the request's whole answer is kept in its claim, one record for the
   * request, and each player's is shortened to CONSOLIDATED_PLAYER_ANSWER_MS. A retry then finds
   * the whole answer in the claim, and no script runs.
   */
  private async keptAsOne<R>(
    origin: WriteOrigin,
    claim: ClaimedKey | undefined,
    userIds: readonly string[],
    run: (userId: string, index: number) => Promise<KeptReply<R>>,
    decode: (raw: RawReply) => Replayable<R>,
  ): Promise<Array<Replayable<R>>> {
    if (claim?.answer !== undefined) return this.keptReplies(claim.answer, userIds.length, decode);
    const replies = await Promise.all(userIds.map((userId, i) => run(userId, i)));
    if (claim) {
      await claim.keep(JSON.stringify(replies.map((r) => r.raw)));
      await Promise.all(
        userIds.map((userId) => this.store.shortenKeptAnswer(origin.workspaceId, userId, claim.keyHash, CONSOLIDATED_PLAYER_ANSWER_MS)),
      );
    }
    return replies;
  }

  /** The replies a whole answer kept in the claim holds: each player's first answer, replayed. */
  private keptReplies<R>(answer: string, players: number, decode: (raw: RawReply) => Replayable<R>): Array<Replayable<R>> {
    let raws: unknown;
    try {
      raws = JSON.parse(answer);
    } catch {
      raws = undefined;
    }
    if (!Array.isArray(raws) || raws.length !== players) throw unexpectedScriptReply([answer.slice(0, 80)]);
    return raws.map((raw) => ({ ...decode(raw as RawReply), replayed: true }));
  }

  /** Runs a request's writes in the workspace's turn (WRITES_PER_WORKSPACE), refused if its predecessor left a debt. */
  private inTurn<T>(origin: WriteOrigin, work: () => Promise<T>): Promise<T> {
    return this.turns.run(
      origin.workspaceId,
      () => {
        origin.refuseInDebt?.();
        return work();
      },
      { ms: this.turnWaitMs, tooLong: () => storageUnavailable() },
    );
  }

  /** Runs the player's script, and counts what an applied (not replayed) write stored. */
  private async apply(origin: WriteOrigin, request: PlayerWriteRequest, claim: ClaimedKey | undefined): Promise<KeptReply<WriteReply>> {
    const write = () => this.write(origin, request, claim);
    // Boards that follow a key it writes get the stored value before it is answered (a replay
    // too: its first attempt may have stopped before them).
    if (!this.follow) return write();
    return this.follow.around(origin.workspaceId, request.userId, request.write, origin.nowMs, write, (r) => r.reply.applied);
  }

  /** Runs the player's script, and counts what an applied (not replayed) write stored. */
  private async write(origin: WriteOrigin, request: PlayerWriteRequest, claim: ClaimedKey | undefined): Promise<KeptReply<WriteReply>> {
    let reply: KeptReply<WriteReply>;
    try {
      reply = await this.store.write(origin.workspaceId, request.userId, request.write, {
        nowMs: origin.nowMs,
        kind: request.kind,
        actor: origin.actor,
        idempotency: claim,
      });
    } catch (err) {
      if (err instanceof AppError && err.code === ErrorCode.OUTCOME_UNKNOWN) {
        this.quota.unknownOutcome(origin.workspaceId, request.write, origin.nowMs);
      }
      throw err;
    }
    if (reply.reply.applied && !reply.replayed) {
      this.quota.record(origin.workspaceId, reply.reply.storage);
      for (const acked of reply.reply.messages.acknowledged) this.quota.recordMessages(origin.workspaceId, -acked.bytes, acked.expiresAtMs);
      this.index?.note(origin.workspaceId, request.userId, origin.nowMs, reply.reply.storage.players);
      origin.chargeWork?.(reply.reply.workBytes);
    }
    return reply;
  }

  private outcomeOf(reply: Replayable<WriteReply>, request: PlayerWriteRequest): Applied | AppError {
    try {
      return appliedOrThrow(reply, this.context(request));
    } catch (err) {
      return err as AppError;
    }
  }

  private context(request: PlayerWriteRequest): RefusalContext {
    return {
      maxKeysPerPlayer: this.limits.maxKeysPerPlayer,
      maxPlayerBytes: this.limits.maxPlayerBytes,
      ifVersion: request.write.ifVersion,
      opKeys: request.opKeys,
    };
  }
}
