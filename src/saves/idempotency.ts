// Idempotency keys (the IETF draft "The Idempotency-Key HTTP Header Field"): the header's
// shape, the request's fingerprint, and the claim of a key in its workspace.
//
// A write's first answer is kept with the player, in the same atomic step as the write
// (lua/write-player.lua, lua/player-session.lua), which makes a retry exactly-once. The claim
// here adds what the player's record alone cannot see: the same key reused for another request,
// even one to another player (422), and a repeat arriving while the first is still being
// applied by this instance (409). A repeat that reaches another instance at that moment waits
// its turn in Redis and replays the first answer, which is the same outcome one step later.
// Two Redis round trips in all: the claim, then the write.
import { createHash } from 'node:crypto';
import { AppError, ErrorCode, badRequest } from '../errors.js';
import type { RedisClient } from '../store/redis/redis.js';
import { claimIdempotencyKey } from '../store/workspaces/idempotency-claims.js';

export const IDEMPOTENCY_HEADER = 'idempotency-key';
export const REPLAYED_HEADER = 'Idempotent-Replayed';
const KEY_SHAPE = /^[\x20-\x7e]{1,128}$/;

export interface Idempotency {
  /** SHA-256 of the key: names its records, since the key itself may hold any printable character. */
  readonly keyHash: string;
  /** SHA-256 of the request (path and body): the same key with another request is refused. */
  readonly fingerprint: string;
}

export interface ClaimedKey extends Idempotency {
  /** Ends this instance's claim once the answer is sent (or failed). */
  done(): void;
}

/** The header's value, or undefined when absent; 400 when malformed. */
export function idempotencyKeyOf(header: string | string[] | undefined): string | undefined {
  if (header === undefined) return undefined;
  if (typeof header !== 'string' || !KEY_SHAPE.test(header)) {
    throw badRequest('Invalid header "Idempotency-Key": must be 1-128 printable ASCII characters, sent once');
  }
  return header;
}

const sha256 = (text: string) => createHash('sha256').update(text).digest('base64url');

export class IdempotencyClaims {
  private readonly inFlight = new Set<string>();

  constructor(
    private readonly redis: RedisClient,
    private readonly ttlSeconds: number,
  ) {}

  /**
   * Claims `rawKey` for this request in the workspace: 409 while this instance still applies a
   * request with the same key, 422 when the key was first used for another request.
   */
  async claim(workspaceId: string, rawKey: string, path: string, body: unknown): Promise<ClaimedKey> {
    const keyHash = sha256(rawKey);
    const fingerprint = sha256(`${path}\n${JSON.stringify(body)}`);
    const local = `${workspaceId}\n${keyHash}`;
    if (this.inFlight.has(local)) {
      throw new AppError(
        ErrorCode.IDEMPOTENCY_IN_PROGRESS,
        'A request with this Idempotency-Key is still being applied; retry in a moment',
      );
    }
    this.inFlight.add(local);
    const done = () => void this.inFlight.delete(local);
    try {
      const first = await claimIdempotencyKey(this.redis, workspaceId, keyHash, fingerprint, this.ttlSeconds);
      if (first !== null && first !== fingerprint) throw keyReused();
    } catch (err) {
      done();
      throw err;
    }
    return { keyHash, fingerprint, done };
  }
}

export function keyReused(): AppError {
  return new AppError(
    ErrorCode.IDEMPOTENCY_KEY_REUSED,
    'This Idempotency-Key was already used for a different request; send a new key for a new request',
  );
}
