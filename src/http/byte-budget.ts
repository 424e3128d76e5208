// A per-workspace byte-rate budget on each instance for everything large a workspace moves:
// request bodies as they decode (plain, chunked or compressed), answers, and the bytes Redis
// copies for it inside a script (history, a delete of everything). A token bucket per
// workspace in memory, refilled at WORKSPACE_BYTES_PER_SECOND up to a burst of one max-size
// player (MAX_PLAYER_BYTES). Moving a 4 MiB answer or a 1 MB body costs this single-threaded
// process, and copying a megabyte costs the single-threaded Redis, tens of milliseconds that
// every other workspace's requests wait behind; the plan's request limit counts requests, not
// bytes, so it cannot bound that. Past the budget: 429 RATE_LIMITED with Retry-After.
//
// Two ways to pay: `charge` before the work when its size is known (a declared body length, a
// large player's size before it is read, each chunk of a streamed body), refused when the
// bucket lacks it; `debit` after the work when its size is only known then (an answer, a
// script's copies), which may leave the bucket in debt, and a workspace in debt is refused
// every request until it has paid (`refuseInDebt`), so work paid afterwards is still bounded.
// Only transfers over LARGE_BYTES are charged, so ordinary traffic never touches the bucket.
import type { Middleware, Next, ParameterizedContext } from 'koa';
import { byteBudgetExceeded } from '../errors.js';
import { WorkspaceGate } from '../domain/workspace-gate.js';
import type { WorkspaceBytes } from '../saves/workspace-bytes.js';
import type { AppState, ByteBudgetCharges } from './state.js';

/** Answers, bodies and script copies up to this size are not charged (READ_INLINE_BYTES of the store). */
export const LARGE_BYTES = 64 * 1024;
/**
 * Heavy requests of one workspace in flight at once on an instance: a request is heavy once its
 * body (as it decoded) or the player it reads whole is over LARGE_BYTES, and stays so until its
 * answer's last byte is sent.
 */
export const HEAVY_PER_WORKSPACE = 1;
/** Longest a heavy request keeps its workspace's turn after its handler returned, for its answer to be sent. */
export const HEAVY_TURN_SEND_MS = 1000;
/** Buckets idle this long are full again, so they are dropped. */
const IDLE_SWEEP = 10_000;

interface Bucket {
  tokens: number;
  atMs: number;
}

export class ByteBudget implements ByteBudgetCharges {
  private readonly buckets = new Map<string, Bucket>();
  private readonly heavy = new WorkspaceGate(Number.MAX_SAFE_INTEGER, HEAVY_PER_WORKSPACE);

  constructor(
    /** Bytes a second per workspace; 0 turns the budget off. */
    readonly bytesPerSecond: number,
    /** Most bytes saved up (one max-size player); also the deepest debt. */
    readonly burstBytes: number,
    private readonly now: () => number = Date.now,
  ) {}

  /**
   * Takes `bytes` from the workspace's bucket or throws 429 RATE_LIMITED. A transfer larger
   * than the burst (a player from before the size limit) passes once the bucket is full and
   * leaves it in debt, so it is never refused for ever.
   */
  charge(workspaceId: string, bytes: number): void {
    if (bytes > LARGE_BYTES) this.chargePart(workspaceId, bytes);
  }

  /**
   * charge() for a part of a large transfer (a chunk of a streamed body, once the body has
   * passed LARGE_BYTES): charged whatever its own size.
   */
  chargePart(workspaceId: string, bytes: number): void {
    if (this.bytesPerSecond <= 0) return;
    const bucket = this.refilled(workspaceId);
    const needed = Math.min(bytes, this.burstBytes);
    if (bucket.tokens < needed) throw byteBudgetExceeded(this.bytesPerSecond, this.secondsUntil(bucket, needed));
    bucket.tokens -= bytes;
  }

  /**
   * Pays for work already done (an answer, a script's copies): never refused, but the bucket
   * may go into debt, down to one burst, and the workspace then waits (refuseInDebt).
   */
  debit(workspaceId: string, bytes: number): void {
    if (bytes > LARGE_BYTES) this.debitPart(workspaceId, bytes);
  }

  /** debit() for a part of a large transfer (a request's scripts' copies, once their sum passed LARGE_BYTES): whatever its own size. */
  debitPart(workspaceId: string, bytes: number): void {
    if (this.bytesPerSecond <= 0) return;
    const bucket = this.refilled(workspaceId);
    bucket.tokens = Math.max(-this.burstBytes, bucket.tokens - bytes);
  }

  /** Throws 429 while the workspace owes more than it has (a debit left it in debt). */
  refuseInDebt(workspaceId: string): void {
    if (this.bytesPerSecond <= 0 || this.buckets.size === 0) return;
    const bucket = this.buckets.get(workspaceId);
    if (bucket === undefined) return;
    this.refill(bucket, this.now());
    if (bucket.tokens < 0) throw byteBudgetExceeded(this.bytesPerSecond, this.secondsUntil(bucket, 0));
  }

  /**
   * The budget in the guard chain (app.ts), once the request is authenticated: a workspace in
   * debt is refused; a plain body is charged by its declared length before it is read (a body
   * over `maxBodyBytes` is not: the body reader refuses it with 413 unread); a chunked or
   * compressed body is charged as it decodes (middleware/json-body.ts), and answers and
   * scripts' copies afterwards, through ctx.state.byteBudget.
   */
  requests(maxBodyBytes: number): Middleware<AppState> {
    return async (ctx, next) => {
      const principal = ctx.state.principal;
      if (principal && this.bytesPerSecond > 0) {
        const workspaceId = principal.workspace.id;
        this.refuseInDebt(workspaceId);
        const headers = ctx.req.headers;
        const encoding = headers['content-encoding'];
        const declared =
          (encoding === undefined || encoding === 'identity') &&
          headers['transfer-encoding'] === undefined &&
          headers['content-length'] !== undefined;
        if (declared) {
          const length = Number(headers['content-length']);
          if (length > LARGE_BYTES && length <= maxBodyBytes) this.charge(workspaceId, length);
        } else {
          // Chunked or compressed: what it decodes to is only known as it arrives.
          ctx.state.chargeBodyWhileRead = true;
        }
        ctx.state.byteBudget = this;
        return this.withHeavyTurn(ctx, workspaceId, next);
      }
      await next();
    };
  }

  /**
   * Runs the rest of the chain with `ctx.state.heavyTurn`: a request that turns out heavy (a
   * large body as it decoded, a large player to read whole) waits there for its workspace's one
   * turn on this instance, and holds it until its handler has returned and its answer's last
   * byte is sent (or its connection closed), but no longer than HEAVY_TURN_SEND_MS after the
   * handler returned. A neighbour's request then waits behind one heavy request of the
   * workspace, never several that the bucket's burst admitted together, and never behind a
   * read's answer still being encoded or sent (docs/reliability.md, "One heavy request at a
   * time"). Taking the turn again in the same request is the same turn.
   *
   * The bound after the handler returned is for answers that cannot be sent yet: a slow reader,
   * and requests pipelined on one connection, where an answer waits for the one before it,
   * whose request may be waiting for this turn.
   */
  private async withHeavyTurn(ctx: ParameterizedContext<AppState>, workspaceId: string, next: Next): Promise<void> {
    let turn: Promise<() => void> | undefined;
    let returned = false;
    let closed = false;
    let bound: NodeJS.Timeout | undefined;
    const leave = () => {
      clearTimeout(bound);
      void turn?.then((leaveTurn) => leaveTurn());
    };
    ctx.res.once('close', () => {
      closed = true;
      if (returned) leave();
    });
    ctx.state.heavyTurn = async () => {
      turn ??= this.heavy.enter(workspaceId);
      await turn;
    };
    try {
      await next();
    } finally {
      returned = true;
      if (closed) leave();
      else if (turn !== undefined) bound = setTimeout(leave, HEAVY_TURN_SEND_MS).unref();
    }
  }

  private refilled(workspaceId: string): Bucket {
    const nowMs = this.now();
    let bucket = this.buckets.get(workspaceId);
    if (!bucket) {
      if (this.buckets.size >= IDLE_SWEEP) this.sweep(nowMs);
      bucket = { tokens: this.burstBytes, atMs: nowMs };
      this.buckets.set(workspaceId, bucket);
      return bucket;
    }
    this.refill(bucket, nowMs);
    return bucket;
  }

  private refill(bucket: Bucket, nowMs: number): void {
    bucket.tokens = Math.min(this.burstBytes, bucket.tokens + ((nowMs - bucket.atMs) * this.bytesPerSecond) / 1000);
    bucket.atMs = nowMs;
  }

  /** Whole seconds until the bucket holds `needed` tokens (at least 1). */
  private secondsUntil(bucket: Bucket, needed: number): number {
    return Math.max(1, Math.ceil((needed - bucket.tokens) / this.bytesPerSecond));
  }

  /** Drops buckets that have refilled completely (they would start full anyway). */
  private sweep(nowMs: number): void {
    for (const [id, bucket] of this.buckets) {
      if (bucket.tokens + ((nowMs - bucket.atMs) * this.bytesPerSecond) / 1000 >= this.burstBytes) this.buckets.delete(id);
    }
  }
}

/**
 * Debits a large answer to the request's workspace as it is sent, less what the request paid for
 * its contents before (chargeRead, debitRead): a many-player answer that holds one large player
 * charged before still pays for the others.
 */
export function debitAnswer(ctx: { state: AppState }, bytes: number): void {
  const budget = ctx.state.byteBudget;
  const owed = bytes - (ctx.state.answerPaid ?? 0);
  if (budget !== undefined && bytes > LARGE_BYTES && owed > 0) budget.debitPart(ctx.state.principal!.workspace.id, owed);
}

/**
 * Pays for what the request's scripts read or copied inside Redis, summed over the request: a
 * many-player batch's scripts may each stay under LARGE_BYTES and still add up to 100 of them
 * (6.4 MiB of copies for a body of a few bytes). From the first byte once the sum passes
 * LARGE_BYTES; never refused, may leave a debt (debit).
 */
export function debitWork(ctx: { state: AppState }, bytes: number): void {
  debitSummed(ctx, 'workBytes', bytes);
}

/**
 * Pays for small parts of the answer as each is made (the messages a batch hands each player's
 * session: up to 64 KiB a player, 100 players), summed over the request as debitWork sums
 * copies, so that the batch's next player, checking the debt at its turn, sees them. What it
 * debits is not debited again with the answer.
 */
export function debitRead(ctx: { state: AppState }, bytes: number): void {
  ctx.state.answerPaid = (ctx.state.answerPaid ?? 0) + debitSummed(ctx, 'readBytes', bytes);
}

/**
 * The request's account with its workspace's byte budget, as its writes pay it
 * (saves/workspace-bytes.ts): their scripts' copies (debitWork), the messages their replies hand
 * over (debitRead), and the debt checked at each write's turn. Without a budget, nothing is paid.
 */
export function requestBytes(ctx: { state: AppState }): WorkspaceBytes {
  return {
    chargeWork: (bytes) => debitWork(ctx, bytes),
    chargeAnswer: (bytes) => debitRead(ctx, bytes),
    refuseInDebt: () => ctx.state.byteBudget?.refuseInDebt(ctx.state.principal!.workspace.id),
  };
}

/** Adds `bytes` to the request's sum, and debits from the first byte once it passes LARGE_BYTES; what it debited. */
function debitSummed(ctx: { state: AppState }, sum: 'workBytes' | 'readBytes', bytes: number): number {
  const budget = ctx.state.byteBudget;
  if (budget === undefined || bytes <= 0) return 0;
  const before = ctx.state[sum] ?? 0;
  const total = before + bytes;
  ctx.state[sum] = total;
  if (total <= LARGE_BYTES) return 0;
  const debited = before > LARGE_BYTES ? bytes : total;
  budget.debitPart(ctx.state.principal!.workspace.id, debited);
  return debited;
}

/**
 * Makes the request heavy before its work, for work whose size is known only once done and may
 * be large though each of its parts is small (an acquire loading many players, a read of
 * messages): waits for the workspace's heavy turn (held to the answer's last byte), then refuses
 * it (429) while the one before it left the workspace in debt. Its answer is debited as it is sent.
 */
export async function heavyFromTheStart(ctx: { state: AppState }): Promise<void> {
  await ctx.state.heavyTurn?.();
  ctx.state.byteBudget?.refuseInDebt(ctx.state.principal!.workspace.id);
}

/**
 * Charges a large read before it is made (its size known from the player's meta), refusing it
 * past the budget, then waits for the workspace's heavy turn (held to the answer's last byte);
 * the answer is then not debited again for it.
 */
export async function chargeRead(ctx: { state: AppState }, bytes: number): Promise<void> {
  const budget = ctx.state.byteBudget;
  if (budget === undefined || bytes <= LARGE_BYTES) return;
  budget.charge(ctx.state.principal!.workspace.id, bytes);
  ctx.state.answerPaid = (ctx.state.answerPaid ?? 0) + bytes;
  await ctx.state.heavyTurn?.();
}
