// Applies the writes of the public API to players: claims the request's idempotency key (when
// it has one), runs the player's script, and turns its reply into an outcome. One player, many
// players (each atomic on its own, in parallel), and the session calls all come through here,
// so that the claim and the replay work the same for each.
import type { Plan } from '../domain/types.js';
import type { AppError } from '../errors.js';
import type { PlayerDataStore } from '../store/players/player-data.js';
import type { PlayerIndexRecorder } from '../store/workspaces/player-index.js';
import type { PlayerWrite, Replayable, SessionReply, SessionRequest } from '../store/players/script-protocol.js';
import type { ClaimedKey, IdempotencyClaims } from './idempotency.js';
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

export class PlayerWrites {
  constructor(
    private readonly store: PlayerDataStore,
    private readonly claims: IdempotencyClaims,
    private readonly limits: PlayerLimitsView,
    private readonly quota: StorageQuota,
    /** The workspaces' players lists (the console's), fed by every applied write. */
    private readonly index?: PlayerIndexRecorder,
  ) {}

  /** One player's write: its outcome, or its refusal thrown (as the first answer, when replayed). */
  one(origin: WriteOrigin, request: PlayerWriteRequest): Promise<Applied> {
    const checked = this.quota.check(origin.workspaceId, origin.plan, request.write, origin.nowMs);
    return this.claimed(origin, checked, async (claim) => appliedOrThrow(await this.apply(origin, request, claim), this.context(request)));
  }

  /** Many players' writes, each atomic, independent of the others: an outcome or a refusal each. */
  many(origin: WriteOrigin, requests: readonly PlayerWriteRequest[]): Promise<Array<Applied | AppError>> {
    // One check for the request: the quota is the workspace's, the same for every player.
    const adding = requests.find((r) => !(r.write.deleteAll || r.write.ops.every((op) => op.op === 'delete')));
    const checked = adding ? this.quota.check(origin.workspaceId, origin.plan, adding.write, origin.nowMs) : undefined;
    return this.claimed(origin, checked, (claim) =>
      Promise.all(
        requests.map(async (request) => {
          const reply = await this.apply(origin, request, claim);
          try {
            return appliedOrThrow(reply, this.context(request));
          } catch (err) {
            return err as AppError;
          }
        }),
      ),
    );
  }

  /** A session call, under the request's idempotency key. */
  session(origin: WriteOrigin, userId: string, request: SessionRequest): Promise<Replayable<SessionReply>> {
    return this.claimed(origin, undefined, (claim) => this.store.session(origin.workspaceId, userId, request, claim));
  }

  /** Runs the player's script, and counts what an applied (not replayed) write stored. */
  private async apply(origin: WriteOrigin, request: PlayerWriteRequest, claim: ClaimedKey | undefined) {
    const reply = await this.store.write(origin.workspaceId, request.userId, request.write, {
      nowMs: origin.nowMs,
      kind: request.kind,
      actor: origin.actor,
      idempotency: claim,
    });
    if (reply.reply.applied && !reply.replayed) {
      this.quota.record(origin.workspaceId, reply.reply.storage);
      this.index?.note(origin.workspaceId, request.userId, origin.nowMs, reply.reply.storage.players);
      origin.chargeWork?.(reply.reply.workBytes);
    }
    return reply;
  }

  /**
   * Runs `work` once the quota check passed and the idempotency key (if any) is claimed. The two
   * go to Redis together when both need it (the workspace's total, the claim: one slot, one
   * round trip), so a write costs at most two round trips: that one, and the write.
   */
  private async claimed<T>(
    origin: WriteOrigin,
    checked: void | Promise<void>,
    work: (claim: ClaimedKey | undefined) => Promise<T>,
  ): Promise<T> {
    if (origin.idempotencyKey === undefined) {
      if (checked) await checked;
      return work(undefined);
    }
    // A refused claim (409, 422) answers at once, without waiting for the quota's answer.
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

  private context(request: PlayerWriteRequest): RefusalContext {
    return {
      maxKeysPerPlayer: this.limits.maxKeysPerPlayer,
      maxPlayerBytes: this.limits.maxPlayerBytes,
      ifVersion: request.write.ifVersion,
      opKeys: request.opKeys,
    };
  }
}
