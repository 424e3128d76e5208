// Applies the writes of the public API to players: the quota's verdict, the request's
// idempotency key claimed (when it has one), the player's script, and its reply turned into an
// outcome, with what it stored and kept counted. One player, many players (each atomic on its
// own, one after another on each Redis node, the nodes side by side; a player whose node fails
// fails alone), and the session calls all come through here, so that the claim and the replay
// work the same for each.
import type { Plan } from '../domain/types.js';
import { AppError, ErrorCode, storageUnavailable } from '../errors.js';
import { isUnavailableError } from '../store/redis/redis.js';
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
import { WriteTurns } from './write-turns.js';

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
  /** Pays for what a write's reply hands over for the answer (the messages delivered to its session), as each comes. */
  readonly chargeAnswer?: (bytes: number) => void;
  /**
   * Throws (429) while the workspace owes the byte budget: checked again once the write has its
   * workspace's turn, since the write before it may have copied much inside Redis (WRITES_PER_WORKSPACE).
   */
  readonly refuseInDebt?: () => void;
}

/**
 * A workspace's writes (their scripts) in flight at once on an instance, on each Redis node
 * (one on a single server; on a cluster, one per master, each its own thread). What a write's
 * script copies inside Redis (a restore point of everything a delete or a batch replaces, up to
 * a whole player) is only known once it has run, and is paid for then (chargeWork); writes sent
 * side by side would all run before the first was paid for, back to back on Redis's one
 * thread. One at a time, each checks the debt its predecessor left before it runs, and another
 * workspace's command waits behind at most one of them (docs/reliability.md). Per node, so that
 * a write waiting on a failed master does not hold up the workspace's writes to the others.
 */
export const WRITES_PER_WORKSPACE = 1;

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

/**
 * A player's write that failed because its Redis node did not serve it (STORAGE_UNAVAILABLE,
 * nothing sent; OUTCOME_UNKNOWN, sent, no answer): that player's outcome in a many-player
 * request, which the others do not share. Anything else (a bug) is not.
 */
function storageFailure(err: unknown): AppError | undefined {
  if (err instanceof AppError) return err.code === ErrorCode.STORAGE_UNAVAILABLE || err.code === ErrorCode.OUTCOME_UNKNOWN ? err : undefined;
  return isUnavailableError(err) ? storageUnavailable(err) : undefined;
}

/** Ends a write turn, told whether Redis answered the work done in it (WriteTurns). */
type Leave = (answered?: boolean) => void;

/** The values of settled promises, the first rejection thrown once all have settled. */
function allOrFirstFailure<T>(settled: ReadonlyArray<PromiseSettledResult<T>>): T[] {
  const failed = settled.find((s): s is PromiseRejectedResult => s.status === 'rejected');
  if (failed) throw failed.reason;
  return settled.map((s) => (s as PromiseFulfilledResult<T>).value);
}

export class PlayerWrites {
  private readonly turns: WriteTurns;

  constructor(
    private readonly store: PlayerDataStore,
    private readonly claims: IdempotencyClaims,
    private readonly limits: PlayerLimitsView,
    private readonly quota: StorageQuota,
    /**
     * Longest a write waits for its workspace's turn: the Redis command timeout
     * (REDIS_COMMAND_TIMEOUT_MS). A write refused its turn is sent nothing: 429 RATE_LIMITED when
     * the turns moved meanwhile (the workspace queued more than they get through: its own pace),
     * 503 STORAGE_UNAVAILABLE when the write ahead waited on Redis all along (saves/write-turns.ts).
     */
    turnWaitMs: number,
    /** The workspaces' players lists (the console's), fed by every applied write. */
    private readonly index?: PlayerIndexRecorder,
    /** Boards that follow a player key, brought to the stored value before a write is answered. */
    private readonly follow?: WriteFollowers,
  ) {
    this.turns = new WriteTurns(WRITES_PER_WORKSPACE, turnWaitMs);
  }

  /** One player's write: its outcome, or its refusal thrown (as the first answer, when replayed). */
  one(origin: WriteOrigin, request: PlayerWriteRequest): Promise<Applied> {
    // What the write may add is held against the quota until it is counted (StorageQuota.holding).
    const verdict = this.quota.verdict(origin.workspaceId, origin.plan, adds(request.write), origin.nowMs, [request.write]);
    return this.quota.holding(origin.workspaceId, verdict, () =>
      withClaim(this.claims, origin, verdict, async (claim) => {
        const reply = await this.inTurn(origin, request.userId, () => this.apply(origin, request, claim));
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
          this.perNode(origin, requests, (request) => this.apply(origin, request, claim)),
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
   * scripts run side by side in their workspace's turns (inTurns): a session script's work is
   * small, but 100 of them a request at a plan's burst of 300 requests was 30,000 at once. A
   * player whose node fails is that player's 503 (storageFailure), not the request's.
   */
  sessions(origin: WriteOrigin, userIds: readonly string[], request: (userId: string) => SessionRequest): Promise<Array<Replayable<SessionReply> | AppError>> {
    const verdict = this.quota.verdict(origin.workspaceId, origin.plan, false, origin.nowMs, [], userIds.map(request));
    return this.quota.holding(origin.workspaceId, verdict, () => withClaim(this.claims, origin, verdict, (claim, judged) => {
      const action = request(userIds[0]!).action;
      return this.keptAsOne<SessionReply, AppError>(origin, claim, userIds, (raw) => decodeSessionReply(raw, action), async () => {
        const settled = await this.inTurns(origin, userIds, (userId) => this.store.session(origin.workspaceId, userId, { ...request(userId), overQuota: judged.over }, claim));
        return settled.map((outcome) => {
          if (outcome instanceof AppError) return outcome;
          if (outcome.status === 'fulfilled') return (this.quota.recordSession(origin.workspaceId, outcome.value), outcome.value);
          const failed = storageFailure(outcome.reason);
          if (failed) return failed;
          throw outcome.reason;
        });
      });
    }));
  }

  /**
   * Runs `work` for many players of a workspace in its turns (WRITES_PER_WORKSPACE): the players
   * grouped by the Redis node that holds them, a group's side by side in that node's turn, the
   * groups side by side (a node that does not answer holds up its own group only). A request's
   * fan-out (up to 100 players) then reaches each node one request at a time per workspace. Each
   * player's settled outcome, or its group's refusal of the turn (429 in debt or queued too
   * long, 503 its node not answering), nothing run for it.
   */
  private async inTurns<T>(origin: WriteOrigin, userIds: readonly string[], work: (userId: string) => Promise<T>): Promise<Array<PromiseSettledResult<T> | AppError>> {
    const outcomes = new Array<PromiseSettledResult<T> | AppError>(userIds.length);
    await Promise.all(
      [...this.byNode(origin, userIds)].map(async ([node, group]) => {
        const leave = await this.nodeTurn(origin, node);
        if (leave instanceof AppError) {
          for (const i of group) outcomes[i] = leave;
          return;
        }
        let answered = false;
        try {
          const settled = await Promise.allSettled(group.map((i) => work(userIds[i]!)));
          group.forEach((i, j) => (outcomes[i] = settled[j]!));
          answered = settled.some((s) => s.status === 'fulfilled' || storageFailure(s.reason) === undefined);
        } finally {
          leave(answered);
        }
      }),
    );
    return outcomes;
  }

  /** The players' indexes grouped by the Redis node that holds each, in the request's order. */
  private byNode(origin: WriteOrigin, userIds: readonly string[]): Map<string, number[]> {
    const groups = new Map<string, number[]>();
    userIds.forEach((userId, i) => {
      const node = this.store.nodeOf(origin.workspaceId, userId);
      const group = groups.get(node);
      if (group) group.push(i);
      else groups.set(node, [i]);
    });
    return groups;
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

  /**
   * A batch's players' writes: on each node one after another, each in its own turn of the
   * workspace there; the nodes side by side. On a node, the player refused its turn (the
   * workspace in debt, queued too long, the node not answering) and every one after it are
   * that refusal, unwritten; a player whose write failed for its node (storageFailure) is that
   * failure, and the ones after it on the node are 503 STORAGE_UNAVAILABLE, unwritten (each
   * would wait as long for the node).
   */
  private async perNode(
    origin: WriteOrigin,
    requests: readonly PlayerWriteRequest[],
    write: (request: PlayerWriteRequest) => Promise<KeptReply<WriteReply>>,
  ): Promise<Array<KeptReply<WriteReply> | AppError>> {
    const replies = new Array<KeptReply<WriteReply> | AppError>(requests.length);
    const nodeInTurns = async (node: string, group: readonly number[]) => {
      for (const [at, i] of group.entries()) {
        const leave = await this.nodeTurn(origin, node);
        if (leave instanceof AppError) {
          for (const rest of group.slice(at)) replies[rest] = leave;
          return;
        }
        let answered = true;
        try {
          replies[i] = await write(requests[i]!);
        } catch (err) {
          const failed = storageFailure(err);
          if (!failed) throw err;
          answered = false;
          replies[i] = failed;
          for (const rest of group.slice(at + 1)) replies[rest] = storageUnavailable(new Error('not sent: a player before it on its Redis node failed'));
          return;
        } finally {
          leave(answered);
        }
      }
    };
    const groups = this.byNode(origin, requests.map((r) => r.userId));
    allOrFirstFailure(await Promise.allSettled([...groups].map(([node, group]) => nodeInTurns(node, group))));
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

  /** Runs a player's write in a turn of its workspace (WRITES_PER_WORKSPACE); its refusal thrown. */
  private async inTurn<T>(origin: WriteOrigin, userId: string, work: () => Promise<T>): Promise<T> {
    const leave = await this.turn(origin, userId);
    if (leave instanceof AppError) throw leave;
    let answered = true;
    try {
      return await work();
    } catch (err) {
      answered = storageFailure(err) === undefined;
      throw err;
    } finally {
      leave(answered);
    }
  }

  /**
   * Waits for a turn of the workspace's writes on the node that holds the player: what ends it,
   * or its refusal, nothing sent: 429 once granted while the workspace owes the byte budget (the
   * write before it may have copied much inside Redis); when not had within turnWaitMs, 429 if
   * the turns moved meanwhile, 503 STORAGE_UNAVAILABLE if the node did not answer (WriteTurns).
   */
  private turn(origin: WriteOrigin, userId: string): Promise<Leave | AppError> {
    return this.nodeTurn(origin, this.store.nodeOf(origin.workspaceId, userId));
  }

  /** turn() on a node already known. */
  private async nodeTurn(origin: WriteOrigin, node: string): Promise<Leave | AppError> {
    let leave: Leave;
    try {
      leave = await this.turns.enter(origin.workspaceId, node);
    } catch (err) {
      if (err instanceof AppError) return err;
      throw err;
    }
    try {
      origin.refuseInDebt?.();
    } catch (err) {
      leave(false);
      if (err instanceof AppError) return err;
      throw err;
    }
    return leave;
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
    // A replay hands its first answer's messages again.
    if (reply.reply.applied) origin.chargeAnswer?.(reply.reply.messages.delivered.reduce((n, m) => n + m.messageJson.length, 0));
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
