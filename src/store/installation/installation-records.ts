// The installation's own records as Redis holds them, for a whole-installation backup
// (admin/installation-backup.ts): workspaces, API keys (by the SHA-256 of the key: the raw key
// is never stored, so never exported), bans and the allow-list. Read and written field for
// field, so a record comes back exactly as it was, fields added by later releases included.
// Writes never replace a record that exists.
import { keys } from '../keys.js';
import type { RedisClient } from '../redis/redis.js';

export interface WorkspaceRecordRaw {
  readonly id: string;
  readonly fields: Record<string, string>;
}

export interface ApiKeyRecordRaw {
  readonly keyHash: string;
  readonly fields: Record<string, string>;
}

export async function workspaceIds(redis: RedisClient): Promise<string[]> {
  return (await redis.smembers(keys.workspaceIndex())).sort();
}

export async function readWorkspaceRaw(redis: RedisClient, id: string): Promise<WorkspaceRecordRaw | undefined> {
  const fields = await redis.hgetall(keys.workspace(id));
  return Object.keys(fields).length === 0 ? undefined : { id, fields };
}

/** Every API key of the workspace whose record exists, by its hash. */
export async function readApiKeysRaw(redis: RedisClient, workspaceId: string): Promise<ApiKeyRecordRaw[]> {
  const out: ApiKeyRecordRaw[] = [];
  for (const keyId of (await redis.smembers(keys.workspaceKeys(workspaceId))).sort()) {
    const keyHash = await redis.get(keys.apiKeyId(keyId));
    if (!keyHash) continue;
    const fields = await redis.hgetall(keys.apiKey(keyHash));
    if (Object.keys(fields).length > 0) out.push({ keyHash, fields });
  }
  return out;
}

/** The record of the key with this hash, as stored, or undefined. */
export async function readApiKeyRaw(redis: RedisClient, keyHash: string): Promise<ApiKeyRecordRaw | undefined> {
  const fields = await redis.hgetall(keys.apiKey(keyHash));
  return Object.keys(fields).length === 0 ? undefined : { keyHash, fields };
}

/** The hash a key id names in this installation, or null. */
export function keyHashOfId(redis: RedisClient, keyId: string): Promise<string | null> {
  return redis.get(keys.apiKeyId(keyId));
}

/** Whether the workspace index lists the id (a workspace can be listed with its record gone). */
export async function isWorkspaceListed(redis: RedisClient, id: string): Promise<boolean> {
  return (await redis.sismember(keys.workspaceIndex(), id)) === 1;
}

/** Creates the workspace unless it exists; false when it did. */
export async function restoreWorkspaceRaw(redis: RedisClient, record: WorkspaceRecordRaw): Promise<boolean> {
  if ((await redis.exists(keys.workspace(record.id))) === 1) return false;
  await redis.hset(keys.workspace(record.id), record.fields);
  await redis.sadd(keys.workspaceIndex(), record.id);
  return true;
}

/** Creates the key unless a record with its hash exists; the indexes first, as ApiKeyStore.create does. */
export async function restoreApiKeyRaw(redis: RedisClient, record: ApiKeyRecordRaw): Promise<boolean> {
  if ((await redis.exists(keys.apiKey(record.keyHash))) === 1) return false;
  const { keyId, workspaceId } = record.fields;
  if (!keyId || !workspaceId) return false;
  await redis.sadd(keys.workspaceKeys(workspaceId), keyId);
  await redis.set(keys.apiKeyId(keyId), record.keyHash);
  await redis.hset(keys.apiKey(record.keyHash), record.fields);
  return true;
}

export type GateList = 'bans' | 'allow';

const gateKey = (list: GateList) => (list === 'bans' ? keys.bans() : keys.banAllow());

/** Subject -> JSON record of the ban list or the allow-list. */
export async function readGateList(redis: RedisClient, list: GateList): Promise<Record<string, string>> {
  return redis.hgetall(gateKey(list));
}

/** Adds the entry unless the subject has one; false when it did. */
export async function restoreGateEntry(redis: RedisClient, list: GateList, subject: string, json: string): Promise<boolean> {
  return (await redis.hsetnx(gateKey(list), subject, json)) === 1;
}
