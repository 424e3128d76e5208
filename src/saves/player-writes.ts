// Applies the public API's writes to players: the storage quota's verdict (what a write may add
// held against the quota until counted), the request's idempotency key claimed when it has one,
// the player's script run in its workspace's turn (player-turns.ts) with the boards that follow
// its keys around it, and its reply turned into an outcome. What a write stored and kept is
// counted (the quota, the console's players list); what its script copied inside Redis and what
// its reply hands over are charged to the request's byte budget (WriteOrigin.bytes). One player;
// many players, each atomic on its own with an outcome of its own, a many-player answer kept as
// one record under the request's key; and the session calls, one player or many.
import type { Plan } from '../domain/types.js';
import { AppError, ErrorCode } from '../errors.js';
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
import { PlayerTurns, storageFailure } from './player-turns.js';
import type { StorageQuota } from './storage-quota.js';
import type { WorkspaceBytes } from './workspace-bytes.js';

/** Who writes, when, the request's idempotency key if it carries one, and what it pays its byte budget. */
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
  /** The request's account with its workspace's byte budget; absent, nothing is charged. */
  readonly bytes?: WorkspaceBytes | undefined;
}

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
  aroundEach<T>(
    workspaceId: string,
    writes: readonly PlayerWriteRequest[],
    nowMs: number,
    run: (indexes: readonly number[]) => Promise<Array<T | AppError>>,
    applied: (result: T) => boolean,
    failure: (err: unknown) => AppError | undefined,
  ): Promise<Array<T | AppError>>;
}

const adds = (write: PlayerWrite) => !(write.deleteAll || write.ops.every((op) => op.op === 'delete'));

export class PlayerWrites {
  private readonly turns: PlayerTurns;

  constructor(
    private readonly store: PlayerDataStore,
    private readonly claims: IdempotencyClaims,
    private readonly limits: PlayerLimitsView,
    private readonly quota: StorageQuota,
    /**
     * Longest a write waits for its workspace's turn: the Redis command timeout
     * (REDIS_COMMAND_TIMEOUT_MS). A write refused its turn is sent nothing: 429 RATE_LIMITED when
     * the turns moved meanwhile (the workspace queued more than they get through: its own pace),
     * 503 STORAGE_UNAVAILABLE when the write ahead waited on Redis all along (player-turns.ts).
     */
    turnWaitMs: number,
    /** The workspaces' players lists (the console's), fed by every applied write. */
    private readonly index?: PlayerIndexRecorder,
    /** Boards that follow a player key, brought to the stored value before a write is answered. */
    private readonly follow?: WriteFollowers,
  ) {
    this.turns = new PlayerTurns(store, turnWaitMs);
  }

  /** One player's write: its outcome, or its refusal thrown (as the first answer, when replayed). */
  one(origin: WriteOrigin, request: PlayerWriteRequest): Promise<Applied> {
    // What the write may add is held against the quota until it is counted (StorageQuota.holding).
    const verdict = this.quota.verdict(origin.workspaceId, origin.plan, adds(request.write), origin.nowMs, [request.write]);
    return this.quota.holding(origin.workspaceId, verdict, () =>
      withClaim(this.claims, origin, verdict, async (claim) => {
        const reply = await this.followed(origin, request, () =>
          this.turns.inTurn(origin.workspaceId, origin.bytes, request.userId, () => this.write(origin, request, claim)),
        );
        if (claim) this.quota.recordKept(origin.workspaceId, reply.keptBytes, origin.nowMs + claim.ttlSeconds * 1000);
        return appliedOrThrow(reply, this.context(request));
      }),
    );
  }

  /**
   * Many players' writes, each atomic, independent of the others: an outcome or a refusal each.
   * On each Redis node they run one after another, each in a turn of its own of the workspace,
   * checking the debt the ones before it left (a player's script may copy up to a whole player
   * into its restore point, known only once it ran): past the byte budget, the players not yet
   * written are refused 429 each, unwritten, and another workspace's command waits behind at
   * most one of them on a node (docs/reliability.md). The nodes go side by side, so a player on
   * a node that fails (its outcome 503 STORAGE_UNAVAILABLE or OUTCOME_UNKNOWN) holds up no player
   * on another. Under an idempotency key, kept as keptAsOne says.
   */
  many(origin: WriteOrigin, requests: readonly PlayerWriteRequest[]): Promise<Array<Applied | AppError>> {
    // One verdict for the request: the quota is the workspace's, the same for every player.
    const writes = requests.map((r) => r.write);
    const verdict = this.quota.verdict(origin.workspaceId, origin.plan, writes.some(adds), origin.nowMs, writes);
    return this.quota.holding(origin.workspaceId, verdict, () =>
      withClaim(this.claims, origin, verdict, async (claim) => {
        const replies = await this.keptAsOne(origin, claim, requests.map((r) => r.userId), decodeWriteReply, () =>
          this.followedEach(origin, requests, (which) =>
            this.turns.oneByOne(origin.workspaceId, origin.bytes, which.map((i) => requests[i]!.userId), (_userId, j) => this.write(origin, requests[which[j]!]!, claim)),
          ),
        );
        return replies.map((reply, i) => (reply instanceof AppError ? reply : this.outcomeOf(reply, requests[i]!)));
      }),
    );
  }

  /** A session call, under the request's idempotency key. */
  session(origin: WriteOrigin, userId: string, request: SessionRequest): Promise<Replayable<SessionReply>> {
    const verdict = this.quota.verdict(origin.workspaceId, origin.plan, false, origin.nowMs, [], [request]);
    return this.quota.holding(origin.workspaceId, verdict, () => withClaim(this.claims, origin, verdict, async (claim, judged) => {
      const reply = await this.store.session(origin.workspaceId, userId, { ...request, overQuota: judged.over }, claim);
      this.quota.recordSession(origin.workspaceId, reply);
      if (claim) this.quota.recordKept(origin.workspaceId, reply.keptBytes, origin.nowMs + claim.ttlSeconds * 1000);
      return reply;
    }));
  }

  /**
   * The same session call for many players (a server that opens with many at once), each on
   * its own, one request; under an idempotency key its answer is kept as one record, as many()
   * keeps a batch's. `request(userId)` makes each player's (its own new session id). The players'
   * scripts run side by side in their workspace's turns (PlayerTurns.inTurns): a session script's
   * work is small, but 100 of them a request at a plan's burst of 300 requests was 30,000 at once.
   * A player whose node fails is that player's 503, not the request's.
   */
  sessions(origin: WriteOrigin, userIds: readonly string[], request: (userId: string) => SessionRequest): Promise<Array<Replayable<SessionReply> | AppError>> {
    const verdict = this.quota.verdict(origin.workspaceId, origin.plan, false, origin.nowMs, [], userIds.map(request));
    return this.quota.holding(origin.workspaceId, verdict, () => withClaim(this.claims, origin, verdict, (claim, judged) => {
      const action = request(userIds[0]!).action;
      return this.keptAsOne<SessionReply, AppError>(origin, claim, userIds, (raw) => decodeSessionReply(raw, action), async () => {
        const replies = await this.turns.inTurns(origin.workspaceId, origin.bytes, userIds, (userId) =>
          this.store.session(origin.workspaceId, userId, { ...request(userId), overQuota: judged.over }, claim),
        );
        return replies.map((reply) => (reply instanceof AppError ? reply : (this.quota.recordSession(origin.workspaceId, reply), reply)));
      });
    }));
  }

  /**
   * Runs the request's players' scripts (`runAll`, which answers in the players' order, a reply
   * or a refusal each). Under an idempotency key each player's script keeps that player's answer
   * (so a retry is applied once per player, even after a crash half-way). Once all have run, the
   * request's whole answer is kept in its claim, one record for the request, and each player's is
   * shortened to CONSOLIDATED_PLAYER_ANSWER_MS; a retry then finds it there, and no script runs.
   * When players were refused, nothing is kept in the claim, so that a retry with the key writes
   * them (and replays the others from their own records, which stay, and are counted).
   */
  private async keptAsOne<R, E extends AppError = never>(
    origin: WriteOrigin,
    claim: ClaimedKey | undefined,
    userIds: readonly string[],
    decode: (raw: RawReply) => Replayable<R>,
    runAll: () => Promise<Array<KeptReply<R> | E>>,
  ): Promise<Array<Replayable<R> | E>> {
    if (claim?.answer !== undefined) return this.keptReplies(claim.answer, userIds.length, decode);
    const replies = await runAll();
    if (!claim) return replies;
    const ran = replies.filter((r): r is KeptReply<R> => !(r instanceof AppError));
    if (ran.length < replies.length) {
      for (const reply of ran) this.quota.recordKept(origin.workspaceId, reply.keptBytes, origin.nowMs + claim.ttlSeconds * 1000);
      return replies;
    }
    // Not kept (the claim's master failing over): each player's own record stays whole, and a
    // retry replays from there. Shortened where its node answers; one that does not keeps it longer.
    if (!(await claim.keep(JSON.stringify(ran.map((r) => r.raw)), userIds))) return replies;
    await Promise.allSettled(userIds.map((userId) => this.store.shortenKeptAnswer(origin.workspaceId, userId, claim.keyHash, CONSOLIDATED_PLAYER_ANSWER_MS)));
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

  /**
   * Runs the player's write (`run`: its script in its turn) with the boards that follow a key it
   * writes around it, outside the turn (boards/followed-writes.ts). Boards that follow a key it
   * writes get the stored value before it is answered (a replay too: its first attempt may have
   * stopped before them).
   */
  private followed(origin: WriteOrigin, request: PlayerWriteRequest, run: () => Promise<KeptReply<WriteReply>>): Promise<KeptReply<WriteReply>> {
    if (!this.follow) return run();
    return this.follow.around(origin.workspaceId, request.userId, request.write, origin.nowMs, run, (r) => r.reply.applied);
  }

  /** followed() for a request's players: `run` writes those of the indexes given. */
  private followedEach(
    origin: WriteOrigin,
    requests: readonly PlayerWriteRequest[],
    run: (indexes: readonly number[]) => Promise<Array<KeptReply<WriteReply> | AppError>>,
  ): Promise<Array<KeptReply<WriteReply> | AppError>> {
    if (!this.follow) return run(requests.map((_, i) => i));
    return this.follow.aroundEach(origin.workspaceId, requests, origin.nowMs, run, (r) => r.reply.applied, storageFailure);
  }

  /**
   * Runs the player's script; counts what an applied (not replayed) write stored and copied (the
   * quota, the players list, the byte budget), and charges the messages its reply hands over.
   */
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
      origin.bytes?.chargeWork(reply.reply.workBytes);
    }
    // A replay hands its first answer's messages again.
    if (reply.reply.applied) origin.bytes?.chargeAnswer(reply.reply.messages.delivered.reduce((n, m) => n + m.messageJson.length, 0));
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
