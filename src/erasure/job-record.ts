// An erasure job's hash fields, written and read here only: the scope and lists as JSON, times
// as ms, the user id only until the job is done. The view is what operators see (CLI, admin
// API, console): never the user id, its digest instead.
import type { ErasureScope, ErasureSource, ErasureState } from '../domain/erasure.js';

export type ErasurePhase = 'waiting' | 'tombstones' | 'keys' | 'places' | 'finished';

export interface ErasureProgress {
  readonly phase: ErasurePhase;
  readonly workspacesTotal: number;
  readonly workspacesDone: number;
  readonly keysDeleted: number;
}

export interface ErasureJobView {
  readonly jobId: string;
  readonly state: ErasureState;
  readonly source: ErasureSource;
  /** The operator (`cli:<user>`, `admin-api`, `console`) or `roblox-webhook`. */
  readonly requestedBy: string;
  readonly requestedAt: string;
  /** The keyed digest of the user id (docs/erasure.md): `pds erasure list --user ID` finds a user's jobs. */
  readonly user: string;
  readonly scope: { readonly workspaceId: string } | { readonly allWorkspaces: true } | { readonly gameIds: readonly string[] };
  /** The platform's NotificationId, for a job made by the webhook. */
  readonly notificationId: string | null;
  /** The workspaces the player is erased in, once the job has resolved its scope. */
  readonly workspaces: readonly string[];
  /** Games of the request that no workspace serves (the job waits for them: state unmapped). */
  readonly unmappedGames: readonly string[];
  readonly progress: ErasureProgress;
  readonly attempts: number;
  readonly lastError: string | null;
  readonly nextAttemptAt: string | null;
  readonly doneAt: string | null;
}

/** What a job needs to run: its view and, until it is done, the user id. */
export interface ErasureJob extends ErasureJobView {
  readonly userId: string | undefined;
  readonly rawScope: ErasureScope;
  readonly entry: string;
  readonly nextAttemptAtMs: number;
}

export function newJobFields(input: {
  jobId: string;
  userId: string;
  user: string;
  scope: ErasureScope;
  source: ErasureSource;
  requestedBy: string;
  nowMs: number;
  notificationId?: string | undefined;
}): Record<string, string> {
  return {
    id: input.jobId,
    userId: input.userId,
    user: input.user,
    scope: JSON.stringify(input.scope),
    source: input.source,
    requestedBy: input.requestedBy,
    requestedAtMs: String(input.nowMs),
    ...(input.notificationId === undefined ? {} : { notificationId: input.notificationId }),
    attempts: '0',
    phase: 'waiting',
  };
}

export function progressFields(progress: Partial<ErasureProgress>): Record<string, string> {
  return Object.fromEntries(Object.entries(progress).map(([name, value]) => [name, String(value)]));
}

const iso = (ms: string | undefined) => (ms && Number(ms) > 0 ? new Date(Number(ms)).toISOString() : null);
const list = (json: string | undefined): string[] => (json ? (JSON.parse(json) as string[]) : []);

function scopeView(scope: ErasureScope): ErasureJobView['scope'] {
  if (scope.kind === 'workspace') return { workspaceId: scope.workspaceId };
  if (scope.kind === 'all-workspaces') return { allWorkspaces: true };
  return { gameIds: scope.gameIds };
}

export function decodeJob(f: Record<string, string>): ErasureJob {
  const rawScope = JSON.parse(f['scope'] ?? '{"kind":"workspace","workspaceId":""}') as ErasureScope;
  return {
    jobId: f['id']!,
    state: (f['state'] ?? 'pending') as ErasureState,
    source: (f['source'] ?? 'cli') as ErasureSource,
    requestedBy: f['requestedBy'] ?? 'unknown',
    requestedAt: iso(f['requestedAtMs']) ?? new Date(0).toISOString(),
    user: f['user'] ?? '',
    scope: scopeView(rawScope),
    notificationId: f['notificationId'] ?? null,
    workspaces: list(f['workspaces']),
    unmappedGames: list(f['unmappedGames']),
    progress: {
      phase: (f['phase'] ?? 'waiting') as ErasurePhase,
      workspacesTotal: Number(f['workspacesTotal'] ?? 0),
      workspacesDone: Number(f['workspacesDone'] ?? 0),
      keysDeleted: Number(f['keysDeleted'] ?? 0),
    },
    attempts: Number(f['attempts'] ?? 0),
    lastError: f['lastError'] || null,
    nextAttemptAt: iso(f['nextAttemptAt']),
    doneAt: iso(f['doneAtMs']),
    userId: f['userId'],
    rawScope,
    entry: f['entry'] ?? '',
    nextAttemptAtMs: Number(f['nextAttemptAt'] ?? 0),
  };
}

/** The operators' view: the job without its user id and internals. */
export function viewOf(job: ErasureJob): ErasureJobView {
  const { userId: _userId, rawScope: _rawScope, entry: _entry, nextAttemptAtMs: _next, ...view } = job;
  return view;
}
