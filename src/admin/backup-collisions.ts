// Where each workspace of a backup goes in this installation (admin/installation-backup.ts), so
// that a restore never joins two tenants. A backup's workspace whose id is free here is created;
// one whose id holds the same workspace (the same id and creation time: this installation's own
// backup, or a restore run again) is restored into it; one whose id holds another workspace is a
// collision: refused by default (the whole import, before anything is written), or, when the
// operator says so, restored under a new id, or skipped. Keys follow their workspace, and a key
// is never attached to a workspace that is not its own: a key whose hash or id already belongs
// to another workspace here refuses the import whatever the option.
import { createHash } from 'node:crypto';
import { isWorkspaceId } from '../domain/ids.js';
import { AppError, badRequest, ErrorCode } from '../errors.js';
import {
  isWorkspaceListed,
  keyHashOfId,
  readApiKeyRaw,
  readWorkspaceRaw,
  type ApiKeyRecordRaw,
  type WorkspaceRecordRaw,
} from '../store/installation/installation-records.js';
import type { RedisClient } from '../store/redis/redis.js';

export const COLLISION_OPTIONS = ['refuse', 'rename', 'skip'] as const;
export type CollisionOption = (typeof COLLISION_OPTIONS)[number];
/** Refusing joins nothing and loses nothing: the operator then chooses. */
export const DEFAULT_COLLISION_OPTION: CollisionOption = 'refuse';
/** New ids tried for one renamed workspace before the import is refused. */
const RENAME_TRIES = 5;

export function parseCollisionOption(raw: string | undefined): CollisionOption {
  const option = raw ?? DEFAULT_COLLISION_OPTION;
  if (!(COLLISION_OPTIONS as readonly string[]).includes(option)) {
    throw badRequest(`on-collision must be one of ${COLLISION_OPTIONS.join(', ')}`);
  }
  return option as CollisionOption;
}

/** A backup's workspace whose id holds another workspace in this installation. */
export interface Collision {
  readonly workspaceId: string;
  /** Its name in the backup. */
  readonly name: string;
  /** The name of the workspace this installation has under that id ('' when only its index entry is left). */
  readonly existingName: string;
}

export interface RestorePlan {
  /** Backup workspace id -> the id it is restored under here; skipped ones are absent. */
  readonly targets: ReadonlyMap<string, string>;
  readonly renamed: Array<{ readonly from: string; readonly to: string }>;
  readonly skipped: string[];
}

type Here = 'free' | 'same' | { readonly other: string };

/** What this installation holds under `id`, compared with the backup's workspace `record`. */
async function whatIsAt(redis: RedisClient, id: string, record: WorkspaceRecordRaw): Promise<Here> {
  const existing = await readWorkspaceRaw(redis, id);
  if (existing === undefined) return (await isWorkspaceListed(redis, id)) ? { other: '' } : 'free';
  const created = record.fields['createdAt'];
  return created !== undefined && existing.fields['createdAt'] === created ? 'same' : { other: existing.fields['name'] ?? '' };
}

/**
 * A new id for a renamed workspace, derived from its id and creation time: a restore run again
 * finds the workspace it renamed before (`same`) instead of making another.
 */
function renamedId(record: WorkspaceRecordRaw, attempt: number): string {
  const digest = createHash('sha256').update(`${record.id}\n${record.fields['createdAt'] ?? ''}\n${attempt}`).digest('hex');
  const id = `${record.id.slice(0, 55)}-${digest.slice(0, 8)}`;
  if (!isWorkspaceId(id)) throw new Error(`renamed workspace id ${id} is not a workspace id`);
  return id;
}

function refused(message: string, data: Record<string, unknown>): AppError {
  return new AppError(ErrorCode.CONFLICT, `Backup refused, nothing written: ${message}`, { extras: { data } });
}

/** Decides where each workspace and key goes; throws 409 CONFLICT, having written nothing, when it may not. */
export async function planRestore(
  redis: RedisClient,
  workspaces: readonly WorkspaceRecordRaw[],
  apiKeys: readonly ApiKeyRecordRaw[],
  option: CollisionOption,
): Promise<RestorePlan> {
  const targets = new Map<string, string>();
  const renamed: Array<{ from: string; to: string }> = [];
  const skipped: string[] = [];
  const collisions: Collision[] = [];
  for (const record of workspaces) {
    const here = await whatIsAt(redis, record.id, record);
    if (here === 'free' || here === 'same') {
      targets.set(record.id, record.id);
      continue;
    }
    collisions.push({ workspaceId: record.id, name: record.fields['name'] ?? '', existingName: here.other });
    if (option === 'skip') skipped.push(record.id);
    if (option !== 'rename') continue;
    let to: string | undefined;
    for (let attempt = 0; attempt < RENAME_TRIES && to === undefined; attempt++) {
      const candidate = renamedId(record, attempt);
      const there = await whatIsAt(redis, candidate, record);
      if (there === 'free' || there === 'same') to = candidate;
    }
    if (to === undefined) throw refused(`no free id found to rename workspace ${record.id} to`, { collisions });
    targets.set(record.id, to);
    renamed.push({ from: record.id, to });
  }
  if (collisions.length > 0 && option === 'refuse') {
    const list = collisions.map((c) => `${c.workspaceId} ("${c.name}" in the backup, "${c.existingName}" here)`).join(', ');
    throw refused(
      `${collisions.length === 1 ? 'a workspace id' : `${collisions.length} workspace ids`} of the backup already belong to other workspaces ` +
        `in this installation: ${list}. Run again with --on-collision rename (the backup's workspaces get new ids, ` +
        'their keys with them) or --on-collision skip (they are left out)',
      { collisions },
    );
  }

  // A key opens exactly one workspace: one already here for another workspace is never re-pointed.
  const keyConflicts: string[] = [];
  for (const key of apiKeys) {
    const owner = targets.get(key.fields['workspaceId']!);
    if (owner === undefined) continue;
    const existing = await readApiKeyRaw(redis, key.keyHash);
    const hashAtId = await keyHashOfId(redis, key.fields['keyId']!);
    if ((existing !== undefined && existing.fields['workspaceId'] !== owner) || (hashAtId !== null && hashAtId !== key.keyHash)) {
      keyConflicts.push(`${key.fields['keyId']} (${key.fields['prefix'] ?? 'key'}...) of workspace ${key.fields['workspaceId']}`);
    }
  }
  if (keyConflicts.length > 0) {
    throw refused(`API keys of the backup already belong to other workspaces or keys in this installation: ${keyConflicts.join(', ')}`, {
      keys: keyConflicts,
    });
  }
  return { targets, renamed, skipped };
}
