// The turns of a workspace's writes on each Redis node (WRITES_PER_WORKSPACE at a time), and
// what a write that waited too long for its turn is told: whose fault the wait was. A turn
// that moves (writes ahead of it finished while it waited) means the workspace queued more at
// once than its turns get through in the wait: 429 RATE_LIMITED with Retry-After at its own
// pace, never a 5xx while Redis answers (issue 38, item 11). A turn that did not move (each
// write ahead held it as long as the wait, the command timeout, so its command timed out)
// means the node does not answer: 503 STORAGE_UNAVAILABLE, nothing sent. So is a write that
// gets its turn after the write ahead of it left without Redis's answer (its node failed it).
import { WorkspaceGate } from '../domain/workspace-gate.js';
import { AppError, ErrorCode, storageUnavailable } from '../errors.js';

/** A turn's state while it is held or waited for: removed once neither. */
interface Turn {
  holders: number;
  queued: number;
  /** When a write Redis answered last finished its turn within the wait (the command timeout). */
  movedAtMs: number;
  /** When a write last left its turn without Redis's answer (it failed for its node). */
  failedAtMs: number;
  /** The turns' recent mean length, for the Retry-After of a refused write. */
  heldMs: number;
}

/** Retry-After of a write refused its turn: the queue ahead of it at its recent pace, within these. */
const MIN_RETRY_SECONDS = 1;
const MAX_RETRY_SECONDS = 30;

export function writesQueued(retryAfterSeconds: number): AppError {
  return new AppError(
    ErrorCode.RATE_LIMITED,
    `This workspace sent more writes at once than its turn on storage gets through in time (its writes run one at a time on each Redis node); this is not the plan's request limit: retry in ${retryAfterSeconds} s, or send fewer at once`,
    { headers: { 'Retry-After': String(retryAfterSeconds) } },
  );
}

/**
 * How a write's turn ended: Redis answered it (a refusal by a script included); it got no
 * answer, its node failed it (STORAGE_UNAVAILABLE, OUTCOME_UNKNOWN); or nothing was sent (the
 * workspace in debt).
 */
export type TurnOutcome = 'answered' | 'no answer' | 'not sent';

export class WriteTurns {
  private readonly gate: WorkspaceGate;
  private readonly turns = new Map<string, Turn>();

  constructor(
    perWorkspace: number,
    /** Longest a write waits for its turn (the Redis command timeout). */
    private readonly waitMs: number,
    private readonly now: () => number = () => performance.now(),
  ) {
    this.gate = new WorkspaceGate(Number.MAX_SAFE_INTEGER, perWorkspace);
  }

  /**
   * Waits for the workspace's turn on `node`: what ends it (told how the write went, see
   * TurnOutcome); its refusal thrown (429 or 503, see above).
   */
  async enter(workspaceId: string, node: string): Promise<(outcome?: TurnOutcome) => void> {
    const name = `${workspaceId}\n${node}`;
    const turn = this.turns.get(name) ?? { holders: 0, queued: 0, movedAtMs: -Infinity, failedAtMs: -Infinity, heldMs: 0 };
    this.turns.set(name, turn);
    const since = this.now();
    turn.queued++;
    let leave: () => void;
    try {
      leave = await this.gate.enter(name, { ms: this.waitMs, tooLong: () => this.refusal(turn, since) });
    } catch (err) {
      turn.queued--;
      this.forget(name, turn);
      throw err;
    }
    turn.queued--;
    // A write ahead of it left without Redis's answer while it waited: the node did not answer
    // that write, so it would most likely not answer this one either, and each write queued so
    // would wait a whole command timeout more (the third of three at once answered after 3 s,
    // and OUTCOME_UNKNOWN). Refused now, nothing sent; a write that comes after the failure
    // tries the node again.
    if (turn.failedAtMs >= since) {
      leave();
      this.forget(name, turn);
      throw storageUnavailable(new Error('not sent: the write ahead of it in its turn got no answer from its Redis node'));
    }
    turn.holders++;
    const granted = this.now();
    let held = true;
    return (outcome = 'answered') => {
      if (!held) return;
      held = false;
      const ms = this.now() - granted;
      if (outcome === 'answered' && ms < this.waitMs) turn.movedAtMs = this.now();
      if (outcome === 'no answer') turn.failedAtMs = this.now();
      turn.heldMs = turn.heldMs === 0 ? ms : 0.8 * turn.heldMs + 0.2 * ms;
      turn.holders--;
      leave();
      this.forget(name, turn);
    };
  }

  private refusal(turn: Turn, since: number): AppError {
    if (turn.movedAtMs < since) return storageUnavailable(new Error(`no write turn within ${this.waitMs} ms: the write ahead of it waited on its Redis node all along`));
    const seconds = Math.ceil((turn.queued * turn.heldMs) / 1000);
    return writesQueued(Math.min(MAX_RETRY_SECONDS, Math.max(MIN_RETRY_SECONDS, seconds)));
  }

  private forget(name: string, turn: Turn): void {
    if (turn.holders === 0 && turn.queued === 0 && this.turns.get(name) === turn) this.turns.delete(name);
  }
}
