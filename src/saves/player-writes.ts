// Applies the writes of the public API to players: claims the request's idempotency key (when
// it has one), runs the player's script, and turns its reply into an outcome. One player, many
// players (each atomic on its own, in parallel), and the session calls all come through here,
// so that the claim and the replay work the same for each.
import type { AppError } from '../errors.js';
import type { PlayerDataStore, PlayerWrite, ScriptReply, SessionRequest } from '../store/player-data.js';
import type { ClaimedKey, IdempotencyClaims } from './idempotency.js';
import { appliedOrThrow, type Applied, type RefusalContext } from './outcomes.js';

/** Who writes, when, and the request's idempotency key if it carries one. */
export interface WriteOrigin {
  readonly workspaceId: string;
  /** `key:<id>` for an API key, `admin:<actor>` for an operator: kept in the history. */
  readonly actor: string;
  readonly nowMs: number;
  readonly idempotencyKey?: string | undefined;
  /** The request's path and parsed body: the idempotency key's fingerprint. */
  readonly path: string;
  readonly body: unknown;
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
  ) {}

  /** One player's write: its outcome, or its refusal thrown (as the first answer, when replayed). */
  one(origin: WriteOrigin, request: PlayerWriteRequest): Promise<Applied> {
    return this.claimed(origin, async (claim) => {
      const reply = await this.store.write(origin.workspaceId, request.userId, request.write, {
        nowMs: origin.nowMs,
        kind: request.kind,
        actor: origin.actor,
        idempotency: claim,
      });
      return appliedOrThrow(reply, this.context(request));
    });
  }

  /** Many players' writes, each atomic, independent of the others: an outcome or a refusal each. */
  many(origin: WriteOrigin, requests: readonly PlayerWriteRequest[]): Promise<Array<Applied | AppError>> {
    return this.claimed(origin, (claim) =>
      Promise.all(
        requests.map(async (request) => {
          const reply = await this.store.write(origin.workspaceId, request.userId, request.write, {
            nowMs: origin.nowMs,
            kind: request.kind,
            actor: origin.actor,
            idempotency: claim,
          });
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
  session(origin: WriteOrigin, userId: string, request: SessionRequest): Promise<ScriptReply> {
    return this.claimed(origin, (claim) => this.store.session(origin.workspaceId, userId, request, claim));
  }

  private async claimed<T>(origin: WriteOrigin, work: (claim: ClaimedKey | undefined) => Promise<T>): Promise<T> {
    if (origin.idempotencyKey === undefined) return work(undefined);
    const claim = await this.claims.claim(origin.workspaceId, origin.idempotencyKey, origin.path, origin.body);
    try {
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
