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
import type { KeepVerdict } from './storage-quota.js';
import { isUnavailableError, type RedisClient } from '../store/redis/redis.js';
import { KEPT_NOTE_BYTES } from '../store/players/kept-elsewhere.js';
import { claimBytes, claimIdempotencyKey, claimsSpreadSince, keepClaimAnswer, readLegacyClaim } from '../store/workspaces/idempotency-claims.js';

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
  /** Seconds the answers of this request are kept. */
  readonly ttlSeconds: number;
  /** The whole answer the first request with this key kept in the claim (a batch of many players), if any. */
  readonly answer?: string;
  /**
   * Keeps this request's whole answer in the claim, where a retry finds it (keepClaimAnswer);
   * `userIds`, the players it names, are noted so that an erasure of one deletes it. Resolves
   * false when Redis could not keep it (the claim's master failing over): the players' own
   * records then stay as they are, where a retry finds each answer, and the request still answers.
   */
  keep(answer: string, userIds: readonly string[]): Promise<boolean>;
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

/** How often a claim whose master does not answer is sent again while it waits out a failover. */
export const CLAIM_RETRY_MS = 250;

export class IdempotencyClaims {
  private readonly inFlight = new Set<string>();
  /** Workspace id -> until when (ms) its legacy claims are read (readLegacy), once this instance knows. */
  private readonly legacyUntilMs = new Map<string, number>();

  constructor(
    private readonly redis: RedisClient,
    private readonly ttlSeconds: number,
    /** Told the bytes a new claim, or an answer kept in one, costs Redis, and until when (the storage totals). */
    private readonly onKept: (workspaceId: string, bytes: number, expiresAtMs: number) => void = () => {},
    /**
     * How long a claim waits out a failover of its master (IDEMPOTENCY_CLAIM_FAILOVER_MS; on a
     * cluster only). A claim lives in a slot chosen by its key, so a third of a busy workspace's
     * requests claim on any one of three masters: without the wait, each of them failed whole
     * while that master failed over, its players' own masters healthy (test-long/fleet).
     */
    private readonly failoverWaitMs = 0,
  ) {}

  /**
   * SET NX GET of the claim, sent again every CLAIM_RETRY_MS while its master cannot serve, up to
   * failoverWaitMs. A claim that reached Redis before the failure and is answered after it finds
   * this request's own fingerprint, which is what a retry of the request would find.
   */
  private claimOnce(workspaceId: string, keyHash: string, fingerprint: string, ttlSeconds: number): Promise<string | null> {
    return this.servedThroughFailover(() => claimIdempotencyKey(this.redis, workspaceId, keyHash, fingerprint, ttlSeconds));
  }

  /**
   * `command`, sent again every CLAIM_RETRY_MS while its master cannot serve, up to
   * failoverWaitMs (on a cluster). The claim and the read of the claim the release before kept
   * in the workspace's slot both go through it: without the wait for the latter, every
   * many-player request with a key failed whole while the workspace's master failed over
   * (the fleet test with the window's master killed: 421 of 9,813 healthy players' operations).
   */
  private async servedThroughFailover<T>(command: () => Promise<T>): Promise<T> {
    const deadline = Date.now() + (this.redis.isCluster ? this.failoverWaitMs : 0);
    for (;;) {
      try {
        return await command();
      } catch (err) {
        if (!isUnavailableError(err) || Date.now() + CLAIM_RETRY_MS > deadline) throw err;
        await new Promise((resolve) => setTimeout(resolve, CLAIM_RETRY_MS));
      }
    }
  }

  /**
   * The claim of `keyHash` the release before kept in the workspace's slot, while one may live:
   * for twice IDEMPOTENCY_TTL_SECONDS (a claim's longest life, after a rolling upgrade shorter
   * than that) from the first such read by this release in the workspace (keys.claimsSpreadSince,
   * read with the first legacy read of each workspace by each instance). Past that, a many-player
   * request sends nothing to the workspace's slot for it: one GET a request on one master made
   * it the busiest of a cluster under one busy workspace (test-long/fleet). Both reads wait out
   * a failover of that master as the claim does.
   */
  private async readLegacy(workspaceId: string, keyHash: string): Promise<string | null> {
    const until = this.legacyUntilMs.get(workspaceId);
    if (until !== undefined && Date.now() >= until) return null;
    const read = this.servedThroughFailover(() => readLegacyClaim(this.redis, workspaceId, keyHash));
    if (until !== undefined) return read;
    const [since, held] = await Promise.all([this.servedThroughFailover(() => claimsSpreadSince(this.redis, workspaceId, Date.now())), read]);
    this.legacyUntilMs.set(workspaceId, since + 2 * this.ttlSeconds * 1000);
    return Date.now() < since + 2 * this.ttlSeconds * 1000 ? held : null;
  }

  /**
   * Claims `rawKey` for this request in the workspace, for `ttlSeconds` (the configured time
   * unless the workspace keeps answers shorter): 409 while this instance still applies a
   * request with the same key, 422 when the key was first used for another request.
   */
  async claim(workspaceId: string, rawKey: string, path: string, body: unknown, ttlSeconds = this.ttlSeconds): Promise<ClaimedKey> {
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
    let answer: string | undefined;
    try {
      const first = await this.claimOnce(workspaceId, keyHash, fingerprint, ttlSeconds);
      if (first === null) this.onKept(workspaceId, claimBytes(workspaceId, keyHash, fingerprint), Date.now() + ttlSeconds * 1000);
      // A many-player request keeps its whole answer in its claim only (its players' records a
      // minute): retried across the upgrade that spread the claims, it finds that answer in the
      // claim the release before kept in the workspace's slot. One GET, many-player requests
      // without a kept answer only, while such a claim may live (readLegacy); goes with
      // keys.legacyIdempotencyClaim.
      const legacy = manyPlayers(body) && !first?.includes('\n') ? await this.readLegacy(workspaceId, keyHash) : null;
      for (const held of [first, legacy]) {
        if (held === null) continue;
        const nl = held.indexOf('\n');
        if ((nl < 0 ? held : held.slice(0, nl)) !== fingerprint) throw keyReused();
        if (nl >= 0) answer ??= held.slice(nl + 1);
      }
    } catch (err) {
      done();
      throw err;
    }
    const keep = async (text: string, userIds: readonly string[]) => {
      const expiresAtMs = Date.now() + ttlSeconds * 1000;
      try {
        await keepClaimAnswer(this.redis, workspaceId, keyHash, fingerprint, text, { userIds, expiresAtMs });
      } catch (err) {
        const mayNotBeKept = isUnavailableError(err) || (err instanceof AppError && (err.code === ErrorCode.STORAGE_UNAVAILABLE || err.code === ErrorCode.OUTCOME_UNKNOWN));
        if (!mayNotBeKept) throw err;
        return false;
      }
      this.onKept(workspaceId, Buffer.byteLength(text) + 1 + userIds.length * KEPT_NOTE_BYTES, expiresAtMs);
      return true;
    };
    return { keyHash, fingerprint, ttlSeconds, ...(answer === undefined ? {} : { answer }), keep, done };
  }
}

/** What a write hands to IdempotencyClaims.around: its workspace, its key if any, what fingerprints it. */
export interface ClaimOrigin {
  readonly workspaceId: string;
  readonly idempotencyKey?: string | undefined;
  readonly path: string;
  readonly body: unknown;
}

/**
 * Runs `work` once the quota's verdict passed (a write that may add data is refused at or over
 * the quota; the verdict says how long answers are kept) and the request's idempotency key (if
 * any) is claimed for that long. The verdict costs no Redis call while the instance's storage
 * totals are fresh, so a write with a key costs two round trips: the claim, then the write.
 * Player writes and leaderboard writes both come through here.
 */
export async function withClaim<T>(
  claims: IdempotencyClaims,
  origin: ClaimOrigin,
  verdict: KeepVerdict | Promise<KeepVerdict>,
  work: (claim: ClaimedKey | undefined, verdict: KeepVerdict) => Promise<T>,
): Promise<T> {
  const judged = await verdict;
  if (origin.idempotencyKey === undefined) return work(undefined, judged);
  const claim = await claims.claim(origin.workspaceId, origin.idempotencyKey, origin.path, origin.body, judged.keepSeconds);
  try {
    return await work(claim, judged);
  } finally {
    claim.done();
  }
}

/** Whether a request names many players (a batch or acquire of `players`), whose whole answer a claim keeps. */
function manyPlayers(body: unknown): boolean {
  return typeof body === 'object' && body !== null && Array.isArray((body as { players?: unknown }).players);
}

export function keyReused(): AppError {
  return new AppError(
    ErrorCode.IDEMPOTENCY_KEY_REUSED,
    'This Idempotency-Key was already used for a different request; send a new key for a new request',
  );
}
