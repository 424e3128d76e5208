// Erases one user in a set of workspaces: tombstones first (an import racing the erasure is
// refused from then on), then every key carrying the player's tag, then the other places a
// player lives (places.ts). Run again after an interruption, it finishes the job: every step
// deletes what is left and writes what is missing.
//
// A game server writing the player meanwhile: each pass deletes the keys it found in one step
// of the player's slot (lua/erase-player-keys.lua), so a write lands wholly before it (and is
// erased) or wholly after it. Passes repeat until one finds nothing, up to MAX_PASSES; what a
// write puts back after the last pass is a new player (version 1 again, no history of the old
// one). A session held during the erasure lived in the player hash and is erased with it: the
// server's next write with that session is SESSION_LOST. Answers naming the player that were
// kept in other slots (noted under its tag: store/players/kept-elsewhere.ts) are deleted with
// its keys, and its waiting messages leave the storage totals. The audit trail's earlier
// entries about the player are renamed to its digest.
import { tombstoneDigest, userDigest } from '../domain/erasure.js';
import type { AuditLogStore } from '../store/installation/audit-log.js';
import { deleteKeptElsewhere, readKeptElsewhere } from '../store/players/kept-elsewhere.js';
import { erasePlayerKeys, findPlayerKeys } from '../store/players/player-keys.js';
import type { RedisClient } from '../store/redis/redis.js';
import type { TombstoneStore } from '../store/installation/tombstones.js';
import { addToStorageTotals } from '../store/workspaces/storage-usage.js';
import type { ErasureProgress } from './job-record.js';
import type { PlayerPlace } from './places.js';

/** Passes over the player's keys before the job stops chasing a game server that keeps writing it. */
export const MAX_PASSES = 5;

export interface EraserDeps {
  readonly redis: RedisClient;
  readonly tombstones: TombstoneStore;
  readonly places: readonly PlayerPlace[];
  /** Its earlier entries naming the player by id are renamed to name it by its digest. */
  readonly audit: AuditLogStore;
  readonly secret: string;
  readonly tombstoneMs: number;
  readonly nowMs: () => number;
}

export interface Erased {
  /** Keys deleted in each workspace (a workspace where the player had nothing: 0). */
  readonly keysByWorkspace: Readonly<Record<string, number>>;
  readonly keysDeleted: number;
  readonly passes: number;
}

/**
 * Erases the user in the workspaces: the player of the user id, and in a workspace of
 * `alsoNamed` the players named after the user besides (workspace -> names: its erasure player
 * names, store/workspaces/erasure-names.ts), each with everything below. The progress adds up
 * over every player.
 */
export async function eraseUser(
  deps: EraserDeps,
  userId: string,
  workspaceIds: readonly string[],
  onProgress: (progress: Partial<ErasureProgress>) => Promise<void>,
  alsoNamed: ReadonlyMap<string, readonly string[]> = new Map(),
): Promise<Erased> {
  const { redis } = deps;
  // Each player erased, with the workspaces it is erased in: the user id's in all of them first.
  const players = new Map<string, string[]>([[userId, [...workspaceIds]]]);
  for (const workspaceId of workspaceIds) {
    for (const name of alsoNamed.get(workspaceId) ?? []) {
      if (name === userId) continue;
      const list = players.get(name);
      if (list) list.push(workspaceId);
      else players.set(name, [workspaceId]);
    }
  }

  await onProgress({ phase: 'tombstones', workspacesTotal: workspaceIds.length });
  await deps.tombstones.put(
    [...players].flatMap(([name, where]) => where.map((workspaceId) => ({ workspaceId, digest: tombstoneDigest(deps.secret, workspaceId, name) }))),
    new Date(deps.nowMs()).toISOString(),
    deps.tombstoneMs,
  );

  await onProgress({ phase: 'keys' });
  const keysByWorkspace: Record<string, number> = Object.fromEntries(workspaceIds.map((w) => [w, 0]));
  let keysDeleted = 0;
  let passes = 0;
  while (passes < MAX_PASSES) {
    passes++;
    let foundAny = false;
    let done = 0;
    for (const [name, where] of players) {
      const found = await findPlayerKeys(redis, where, name);
      if (found.size > 0) foundAny = true;
      for (const [workspaceId, keyNames] of found) {
        // Answers naming the player kept in other slots (a many-player request's, a board write's):
        // those noted now deleted first, so that an attempt cut short after the script deleted
        // the note leaves none behind; those noted meanwhile, as the script answers them.
        const noted = await readKeptElsewhere(redis, workspaceId, name);
        await deleteKeptElsewhere(redis, workspaceId, noted);
        const erased = await erasePlayerKeys(redis, workspaceId, name, keyNames);
        await deleteKeptElsewhere(redis, workspaceId, erased.keptElsewhere.filter((member) => !noted.includes(member)));
        const messages = new Map([...erased.messages].map(([hour, bytes]) => [hour, -bytes]));
        if (erased.bytes !== 0 || erased.players !== 0 || messages.size > 0) {
          await addToStorageTotals(redis, workspaceId, { bytes: -erased.bytes, history: -erased.historyBytes, players: -erased.players, messages });
        }
        keysByWorkspace[workspaceId] = (keysByWorkspace[workspaceId] ?? 0) + erased.keysDeleted;
        keysDeleted += erased.keysDeleted;
        if (passes === 1) await onProgress(name === userId ? { workspacesDone: ++done, keysDeleted } : { keysDeleted });
      }
    }
    if (passes === 1) await onProgress({ workspacesDone: workspaceIds.length, keysDeleted });
    else await onProgress({ keysDeleted });
    if (!foundAny) break;
  }

  await onProgress({ phase: 'places' });
  // The audit trail named the player by id when support staff read or changed it (the target)
  // or took it off a board (details.userId): the trail keeps the facts, under the user's digest
  // (a player named after the user too: its name holds the user id).
  const byDigest = `erased-user:${userDigest(deps.secret, userId)}`;
  await deps.audit.renameMembers(
    [...players].flatMap(([name, where]) =>
      where.flatMap((w) => [
        { within: '', from: `"target":"player:${w}/${name}"`, to: `"target":"player:${w}/${byDigest}"` },
        { within: `"workspaceId":"${w}"`, from: `"userId":"${name}"`, to: `"userId":"${byDigest}"` },
      ]),
    ),
  );
  for (const workspaceId of workspaceIds) {
    for (const [name, where] of players) {
      if (!where.includes(workspaceId)) continue;
      for (const place of deps.places) {
        try {
          await place.removePlayer(workspaceId, name);
        } catch (err) {
          throw new Error(`${place.name}: ${(err as Error).message}`, { cause: err });
        }
      }
    }
  }
  return { keysByWorkspace, keysDeleted, passes };
}
