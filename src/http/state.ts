// What the middleware chain leaves on ctx.state for the next link.
import type { Principal } from '../auth/authenticator.js';
import type { RateLimitResult } from '../store/workspaces/rate-limiter.js';

/**
 * The workspaces' byte budget as later links charge it (byte-budget.ts's ByteBudget); a write
 * pays it through its request's account (saves/workspace-bytes.ts, byte-budget.ts's requestBytes).
 */
export interface ByteBudgetCharges {
  /** A large transfer before it is made: refused (429) past the budget. */
  charge(workspaceId: string, bytes: number): void;
  /** A part of a large transfer (a chunk of a streamed body): charged whatever its own size. */
  chargePart(workspaceId: string, bytes: number): void;
  /** Work already done (an answer, a request's scripts' copies, once large): never refused, may leave a debt. */
  debitPart(workspaceId: string, bytes: number): void;
  /** Throws 429 while the workspace owes more than it has (a debit left it in debt). */
  refuseInDebt(workspaceId: string): void;
}

/** A player of a many-player request that failed alone, in an answer of 200. */
export interface PlayerRefusal {
  readonly status: number;
  readonly code: string;
  /** What failed (a Redis error, a write turn not had), when known. */
  readonly cause?: unknown;
}

export interface AppState {
  requestId: string;
  /** Time the request arrived, ms since the epoch: one clock reading per request. */
  startedAt: number;
  /** Set when the body did not arrive with the headers: the request waited for it (recheck-key.ts). */
  bodyWaited?: boolean;
  principal?: Principal;
  rateLimit?: RateLimitResult;
  /** The workspace's byte budget (byte-budget.ts), for what is charged after the guard: answers, scripts' copies. */
  byteBudget?: ByteBudgetCharges;
  /**
   * Waits for the workspace's one turn for heavy work on this instance, held until the answer
   * is sent (byte-budget.ts); set with byteBudget.
   */
  heavyTurn?: () => Promise<void>;
  /** A chunked or compressed body: charged to the byte budget as it decodes (middleware/json-body.ts). */
  chargeBodyWhileRead?: boolean;
  /** Bytes of the answer paid before it is sent (a large player read, small reads summed): not debited again when sent. */
  answerPaid?: number;
  /** What the request's scripts have read or copied inside Redis so far, for the byte budget (byte-budget.ts's debitWork). */
  workBytes?: number;
  /** What the request has read for its answer so far in small reads, for the byte budget (byte-budget.ts's debitRead). */
  readBytes?: number;
  /**
   * The players of a many-player request answered 200 that failed alone (refused-players.ts):
   * the request log counts them by code, the errors middleware hands their 5xx to the failover log.
   */
  playersRefused?: readonly PlayerRefusal[];
}
