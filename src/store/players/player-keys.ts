// Every key that carries a player's hash tag, found and erased, for the right to erasure: the
// data hash, its history, its kept idempotency answers, and whatever a later release keeps
// under the same tag, without this module knowing them. Three it names, since the erasure needs
// what they hold: the hash (its counts), the waiting messages (their bytes, which the storage
// totals count by hour) and the notes of answers kept in other slots (kept-elsewhere.ts).
//
// Finding them: on one Redis, SCAN with MATCH on the tag (one walk for every workspace of the
// job, since `pds:p:{*:<user>}*` matches the user's tag in any of them). On a cluster the tag
// names one slot, and the slot's own key list (CLUSTER COUNTKEYSINSLOT / GETKEYSINSLOT on its
// master) holds a few keys where a SCAN would walk the whole node; a slot of more keys than
// SLOT_LIST_MAX is walked with SCAN on the nodes instead.
import { Cluster, type Redis } from 'ioredis';
import { keys } from '../keys.js';
import type { RedisClient } from '../redis/redis.js';
import { masters, SCAN_PAGE } from '../redis/scan.js';

/** Keys one slot list may return at once; past it, the slot's node is walked with SCAN. */
export const SLOT_LIST_MAX = 100_000;
/** Keys erased by one script call: a player with more kept answers takes several calls. */
export const ERASE_BATCH = 1000;

export interface ErasedKeys {
  readonly keysDeleted: number;
  /** Bytes of data and history the player hash counted, for the workspace's storage totals. */
  readonly bytes: number;
  /** Of those, the history's: the totals carry history apart too (its own field), which the quota leaves out. */
  readonly historyBytes: number;
  /** 1 when the player held data (it leaves the workspace's count of players). */
  readonly players: number;
  /** The waiting messages' bytes by the UTC hour they expire in (storage-usage.ts counts them so). */
  readonly messages: ReadonlyMap<number, number>;
  /** The note's members: records in other slots keeping an answer that names the player (kept-elsewhere.ts), for the caller to delete. */
  readonly keptElsewhere: readonly string[];
}

async function scanNode(node: Redis, pattern: string, into: (key: string) => void): Promise<void> {
  let cursor = '0';
  do {
    const [next, found] = await node.scan(cursor, 'MATCH', pattern, 'COUNT', SCAN_PAGE);
    cursor = next;
    for (const key of found) into(key);
  } while (cursor !== '0');
}

/** The keys of one slot whose names start with `prefix`, from every master that lists keys in it (two during a slot migration). */
async function slotKeys(cluster: Cluster, tag: string, prefix: string): Promise<string[]> {
  const nodes = masters(cluster);
  const slot = Number(await nodes[0]!.cluster('KEYSLOT', tag));
  const out: string[] = [];
  for (const node of nodes) {
    const count = Number(await node.cluster('COUNTKEYSINSLOT', slot));
    if (count === 0) continue;
    if (count > SLOT_LIST_MAX) {
      await scanNode(node, `${prefix}*`, (key) => out.push(key));
      continue;
    }
    const listed = (await node.cluster('GETKEYSINSLOT', slot, count)) as string[];
    for (const key of listed) if (key.startsWith(prefix)) out.push(key);
  }
  return out;
}

/**
 * Every key tagged with this user's tag in each of the workspaces, by workspace (a workspace
 * with none is absent). Keys written while it looks may or may not be found.
 */
export async function findPlayerKeys(redis: RedisClient, workspaceIds: readonly string[], userId: string): Promise<Map<string, string[]>> {
  const found = new Map<string, string[]>();
  const add = (workspaceId: string, key: string) => {
    const list = found.get(workspaceId);
    if (list) list.push(key);
    else found.set(workspaceId, [key]);
  };
  if (redis instanceof Cluster) {
    for (const workspaceId of workspaceIds) {
      const tag = keys.player(workspaceId, userId);
      for (const key of await slotKeys(redis, tag, tag)) add(workspaceId, key);
    }
    return found;
  }
  const wanted = new Set(workspaceIds);
  const pattern = workspaceIds.length === 1 ? keys.playerTagPattern(workspaceIds[0]!, userId) : keys.userTagPattern(userId);
  await scanNode(redis, pattern, (key) => {
    const workspaceId = keys.playerTagWorkspace(key);
    // The tag pattern's `*` may stand for any workspace: only the job's own are erased.
    if (workspaceId !== undefined && wanted.has(workspaceId) && key.startsWith(keys.player(workspaceId, userId))) add(workspaceId, key);
  });
  return found;
}

/** Erases the keys found for one player (all in its slot), a batch per script call. */
export async function erasePlayerKeys(redis: RedisClient, workspaceId: string, userId: string, found: readonly string[]): Promise<ErasedKeys> {
  // Named in every call (KEYS[1..3]): they name the slot, and are read once, in the first.
  const fixed = [keys.player(workspaceId, userId), keys.playerInbox(workspaceId, userId), keys.playerKeptElsewhere(workspaceId, userId)];
  const others = found.filter((key) => !fixed.includes(key));
  let keysDeleted = 0;
  let bytes = 0;
  let historyBytes = 0;
  let players = 0;
  const messages = new Map<number, number>();
  const keptElsewhere: string[] = [];
  for (let i = 0; i === 0 || i < others.length; i += ERASE_BATCH) {
    const batch = [...fixed, ...others.slice(i, i + ERASE_BATCH)];
    const [deleted, dataBytes, history, hadData, byHour, elsewhere] = await redis.erasePlayerKeys(batch.length, ...batch);
    keysDeleted += Number(deleted);
    bytes += Number(dataBytes) + Number(history);
    historyBytes += Number(history);
    players += Number(hadData);
    for (let j = 0; j < byHour.length; j += 2) messages.set(Number(byHour[j]), (messages.get(Number(byHour[j])) ?? 0) + Number(byHour[j + 1]));
    keptElsewhere.push(...elsewhere);
  }
  return { keysDeleted, bytes, historyBytes, players, messages, keptElsewhere };
}
