// Records an erasure request as a job, the same way for the platform's webhook and for an
// operator (CLI, admin API, console): the digest secret is checked against the installation's,
// the job is recorded in one step (with the webhook's notification id, only the first time),
// and the request goes into the audit trail under the user's digest, never the id.
import { createHash, randomBytes } from 'node:crypto';
import type { ErasureConfig } from '../config.js';
import { keyCheckDigest, userDigest, type ErasureScope, type ErasureSource } from '../domain/erasure.js';
import { AppError, ErrorCode } from '../errors.js';
import type { AuditEntry, AuditLogStore } from '../store/installation/audit-log.js';
import { ErasureJobStore } from '../store/installation/erasure-jobs.js';
import { TombstoneStore } from '../store/installation/tombstones.js';
import type { RedisClient } from '../store/redis/redis.js';
import { decodeJob, newJobFields, viewOf, type ErasureJobView } from './job-record.js';

export interface ErasureRequestInput {
  readonly userId: string;
  readonly scope: ErasureScope;
  readonly source: ErasureSource;
  /** Who asks, for the job and the audit trail. */
  readonly actor: string;
  /** The webhook's NotificationId: a repeat records nothing. */
  readonly notificationId?: string | undefined;
}

export interface RecordedRequest {
  /** False for a repeated notification: `job` is the one made the first time. */
  readonly recorded: boolean;
  readonly job: ErasureJobView | undefined;
  readonly jobId: string;
}

export function newJobId(): string {
  return `er_${randomBytes(12).toString('base64url')}`;
}

/**
 * The installation's digest secret, or ERASURE_NOT_CONFIGURED: unset, or not the one the
 * installation's tombstones were made with (their digests would then never match).
 */
export async function requireDigestSecret(redis: RedisClient, config: ErasureConfig, what: string): Promise<string> {
  const secret = config.digestSecret;
  if (secret === undefined) {
    throw new AppError(
      ErrorCode.ERASURE_NOT_CONFIGURED,
      `${what} needs ERASURE_DIGEST_SECRET, the installation's digest secret (docs/erasure.md); it is not set in this process`,
    );
  }
  if (!(await new TombstoneStore(redis).keyCheckMatches(keyCheckDigest(secret), true))) {
    throw new AppError(
      ErrorCode.ERASURE_NOT_CONFIGURED,
      `${what} refused: this process's ERASURE_DIGEST_SECRET is not the one the installation's erasures were made with (docs/erasure.md)`,
    );
  }
  return secret;
}

export class ErasureRequests {
  readonly jobs: ErasureJobStore;

  constructor(
    private readonly redis: RedisClient,
    private readonly config: ErasureConfig,
    private readonly audit: AuditLogStore,
    private readonly nowMs: () => number = Date.now,
    private readonly onRecorded?: (source: ErasureSource) => void,
  ) {
    this.jobs = new ErasureJobStore(redis);
  }

  async request(input: ErasureRequestInput): Promise<RecordedRequest> {
    const secret = await requireDigestSecret(this.redis, this.config, 'An erasure');
    const now = this.nowMs();
    const jobId = newJobId();
    const user = userDigest(secret, input.userId);
    const { recorded, jobId: id } = await this.jobs.record(
      jobId,
      newJobFields({ jobId, userId: input.userId, user, scope: input.scope, source: input.source, requestedBy: input.actor, nowMs: now, notificationId: input.notificationId }),
      {
        nowMs: now,
        notificationHash: input.notificationId === undefined ? undefined : createHash('sha256').update(input.notificationId).digest('hex'),
        markerMs: this.config.tombstoneMs,
        listedMs: this.config.tombstoneMs,
      },
    );
    if (recorded) {
      this.onRecorded?.(input.source);
      const entry: AuditEntry = {
        at: new Date(now).toISOString(),
        actor: input.actor,
        action: 'erasure.request',
        target: `erasure:${id}`,
        ...(input.scope.kind === 'workspace' ? { workspaceId: input.scope.workspaceId } : {}),
        details: {
          user,
          source: input.source,
          scope: input.scope.kind,
          ...(input.scope.kind === 'games' ? { games: input.scope.gameIds.join(',') } : {}),
          ...(input.notificationId === undefined ? {} : { notificationId: input.notificationId }),
        },
      };
      await this.audit.append(entry);
    }
    const fields = await this.jobs.get(id);
    return { recorded, jobId: id, job: fields ? viewOf(decodeJob(fields)) : undefined };
  }
}
