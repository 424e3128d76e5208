// Runs a workspace's writes to its players in the workspace's turns on the Redis node that holds
// each player (write-turns.ts; WRITES_PER_WORKSPACE at a time on each node): one player's write
// (inTurn), a batch's players one after another on each node, each in a turn of its own
// (oneByOne), or a many-player session call's players side by side in one turn on each node
// (inTurns); the nodes go side by side. A write that has its turn is refused (429, nothing sent)
// while its workspace owes the byte budget (WorkspaceBytes.refuseInDebt): the write before it
// may have copied much inside Redis. A player whose node fails (503 STORAGE_UNAVAILABLE,
// OUTCOME_UNKNOWN) is that player's outcome, which the players on other nodes do not share.
import { AppError, ErrorCode, storageUnavailable } from '../errors.js';
import type { PlayerDataStore } from '../store/players/player-data.js';
import { isUnavailableError } from '../store/redis/redis.js';
import type { WorkspaceBytes } from './workspace-bytes.js';
import { WriteTurns, type TurnOutcome } from './write-turns.js';

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

/**
 * A player's write that failed because its Redis node did not serve it (STORAGE_UNAVAILABLE,
 * nothing sent; OUTCOME_UNKNOWN, sent, no answer): that player's outcome in a many-player
 * request, which the others do not share. Anything else (a bug) is not.
 */
export function storageFailure(err: unknown): AppError | undefined {
  if (err instanceof AppError) return err.code === ErrorCode.STORAGE_UNAVAILABLE || err.code === ErrorCode.OUTCOME_UNKNOWN ? err : undefined;
  return isUnavailableError(err) ? storageUnavailable(err) : undefined;
}

/** Ends a write turn, told how the work done in it went (WriteTurns). */
type Leave = (outcome?: TurnOutcome) => void;

/** The values of settled promises, the first rejection thrown once all have settled. */
function allOrFirstFailure<T>(settled: ReadonlyArray<PromiseSettledResult<T>>): T[] {
  const failed = settled.find((s): s is PromiseRejectedResult => s.status === 'rejected');
  if (failed) throw failed.reason;
  return settled.map((s) => (s as PromiseFulfilledResult<T>).value);
}

export class PlayerTurns {
  private readonly turns: WriteTurns;

  constructor(
    /** Which Redis node holds a player. */
    private readonly nodes: Pick<PlayerDataStore, 'nodeOf'>,
    /**
     * Longest a write waits for its workspace's turn: the Redis command timeout
     * (REDIS_COMMAND_TIMEOUT_MS). A write refused its turn is sent nothing: 429 RATE_LIMITED when
     * the turns moved meanwhile (the workspace queued more than they get through: its own pace),
     * 503 STORAGE_UNAVAILABLE when the write ahead waited on Redis all along (write-turns.ts).
     */
    waitMs: number,
  ) {
    this.turns = new WriteTurns(WRITES_PER_WORKSPACE, waitMs);
  }

  /** Runs a player's write in a turn of its workspace; its refusal thrown. */
  async inTurn<T>(workspaceId: string, bytes: WorkspaceBytes | undefined, userId: string, work: () => Promise<T>): Promise<T> {
    const leave = await this.turn(workspaceId, bytes, userId);
    if (leave instanceof AppError) throw leave;
    let outcome: TurnOutcome = 'answered';
    try {
      return await work();
    } catch (err) {
      if (storageFailure(err) !== undefined) outcome = 'no answer';
      throw err;
    } finally {
      leave(outcome);
    }
  }

  /**
   * A batch's players' writes: on each node one after another, each in its own turn of the
   * workspace there; the nodes side by side. On a node, the player refused its turn (the
   * workspace in debt, queued too long, the node not answering) and every one after it are
   * that refusal, unwritten; a player whose write failed for its node (storageFailure) is that
   * failure, and the ones after it on the node are 503 STORAGE_UNAVAILABLE, unwritten (each
   * would wait as long for the node). Any other failure is thrown, once every node is done.
   */
  async oneByOne<T>(
    workspaceId: string,
    bytes: WorkspaceBytes | undefined,
    userIds: readonly string[],
    work: (userId: string, index: number) => Promise<T>,
  ): Promise<Array<T | AppError>> {
    const replies = new Array<T | AppError>(userIds.length);
    const nodeInTurns = async (node: string, group: readonly number[]) => {
      for (const [at, i] of group.entries()) {
        const leave = await this.nodeTurn(workspaceId, bytes, node);
        if (leave instanceof AppError) {
          for (const rest of group.slice(at)) replies[rest] = leave;
          return;
        }
        let outcome: TurnOutcome = 'answered';
        try {
          replies[i] = await work(userIds[i]!, i);
        } catch (err) {
          const failed = storageFailure(err);
          if (!failed) throw err;
          outcome = 'no answer';
          replies[i] = failed;
          for (const rest of group.slice(at + 1)) replies[rest] = storageUnavailable(new Error('not sent: a player before it on its Redis node failed'));
          return;
        } finally {
          leave(outcome);
        }
      }
    };
    const groups = this.byNode(workspaceId, userIds);
    allOrFirstFailure(await Promise.allSettled([...groups].map(([node, group]) => nodeInTurns(node, group))));
    return replies;
  }

  /**
   * Runs `work` for many players side by side in the workspace's turns: the players grouped by
   * the Redis node that holds them, a group's side by side in one turn of that node, the groups
   * side by side (a node that does not answer holds up its own group only). A request's fan-out
   * (up to 100 players) then reaches each node one request at a time per workspace. Each
   * player's outcome: its value, its node's failure (storageFailure), or its group's refusal of
   * the turn (429 in debt or queued too long, 503 its node not answering), nothing run for it.
   * Any other failure is thrown, once every player is done.
   */
  async inTurns<T>(
    workspaceId: string,
    bytes: WorkspaceBytes | undefined,
    userIds: readonly string[],
    work: (userId: string, index: number) => Promise<T>,
  ): Promise<Array<T | AppError>> {
    const outcomes = new Array<PromiseSettledResult<T> | AppError>(userIds.length);
    await Promise.all(
      [...this.byNode(workspaceId, userIds)].map(async ([node, group]) => {
        const leave = await this.nodeTurn(workspaceId, bytes, node);
        if (leave instanceof AppError) {
          for (const i of group) outcomes[i] = leave;
          return;
        }
        let outcome: TurnOutcome = 'no answer';
        try {
          const settled = await Promise.allSettled(group.map((i) => work(userIds[i]!, i)));
          group.forEach((i, j) => (outcomes[i] = settled[j]!));
          if (settled.some((s) => s.status === 'fulfilled' || storageFailure(s.reason) === undefined)) outcome = 'answered';
        } finally {
          leave(outcome);
        }
      }),
    );
    return outcomes.map((outcome) => {
      if (outcome instanceof AppError) return outcome;
      if (outcome.status === 'fulfilled') return outcome.value;
      const failed = storageFailure(outcome.reason);
      if (failed) return failed;
      throw outcome.reason;
    });
  }

  /** The players' indexes grouped by the Redis node that holds each, in the request's order. */
  private byNode(workspaceId: string, userIds: readonly string[]): Map<string, number[]> {
    const groups = new Map<string, number[]>();
    userIds.forEach((userId, i) => {
      const node = this.nodes.nodeOf(workspaceId, userId);
      const group = groups.get(node);
      if (group) group.push(i);
      else groups.set(node, [i]);
    });
    return groups;
  }

  /**
   * Waits for a turn of the workspace's writes on the node that holds the player: what ends it,
   * or its refusal, nothing sent: 429 once granted while the workspace owes the byte budget (the
   * write before it may have copied much inside Redis); when not had within the wait, 429 if
   * the turns moved meanwhile, 503 STORAGE_UNAVAILABLE if the node did not answer (WriteTurns).
   */
  private turn(workspaceId: string, bytes: WorkspaceBytes | undefined, userId: string): Promise<Leave | AppError> {
    return this.nodeTurn(workspaceId, bytes, this.nodes.nodeOf(workspaceId, userId));
  }

  /** turn() on a node already known. */
  private async nodeTurn(workspaceId: string, bytes: WorkspaceBytes | undefined, node: string): Promise<Leave | AppError> {
    let leave: Leave;
    try {
      leave = await this.turns.enter(workspaceId, node);
    } catch (err) {
      if (err instanceof AppError) return err;
      throw err;
    }
    try {
      bytes?.refuseInDebt();
    } catch (err) {
      leave('not sent');
      if (err instanceof AppError) return err;
      throw err;
    }
    return leave;
  }
}
