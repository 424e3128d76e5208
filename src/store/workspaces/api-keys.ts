// API key records, stored under the SHA-256 of the raw key (`pds:key:<sha256>`), with an
// id index (`pds:kid:<keyId>`) and a per-workspace set of key ids for listing.
// The raw key is never written anywhere.
import type { ApiKeyRecord, KeyScope, KeyStatus } from '../../domain/types.js';
import { keys } from '../keys.js';
import type { RedisClient } from '../redis/redis.js';

function toRecord(fields: Record<string, string>): ApiKeyRecord | undefined {
  const { keyId, workspaceId, status, scope, prefix, createdAt, expiresAt, label, dev } = fields;
  if (!keyId || !workspaceId || !prefix || !createdAt) return undefined;
  if (status !== 'active' && status !== 'revoked') return undefined;
  if (scope !== 'read' && scope !== 'write') return undefined;
  return {
    keyId,
    workspaceId,
    status: status as KeyStatus,
    scope: scope as KeyScope,
    prefix,
    createdAt,
    expiresAt: expiresAt || undefined,
    label: label || undefined,
    dev: dev === '1',
  };
}

export class ApiKeyStore {
  constructor(private readonly redis: RedisClient) {}

  /** Stores a new key. The indexes are written first, so a key is never usable but unlisted. */
  async create(keyHash: string, record: ApiKeyRecord): Promise<void> {
    await this.redis.sadd(keys.workspaceKeys(record.workspaceId), record.keyId);
    await this.redis.set(keys.apiKeyId(record.keyId), keyHash);
    const fields: Record<string, string> = {
      keyId: record.keyId,
      workspaceId: record.workspaceId,
      status: record.status,
      scope: record.scope,
      prefix: record.prefix,
      createdAt: record.createdAt,
    };
    if (record.expiresAt) fields['expiresAt'] = record.expiresAt;
    if (record.label) fields['label'] = record.label;
    if (record.dev) fields['dev'] = '1';
    await this.redis.hset(keys.apiKey(keyHash), fields);
  }

  async findByHash(keyHash: string): Promise<ApiKeyRecord | undefined> {
    return toRecord(await this.redis.hgetall(keys.apiKey(keyHash)));
  }

  async hashOf(keyId: string): Promise<string | undefined> {
    return (await this.redis.get(keys.apiKeyId(keyId))) ?? undefined;
  }

  async findById(keyId: string): Promise<{ keyHash: string; record: ApiKeyRecord } | undefined> {
    const keyHash = await this.hashOf(keyId);
    if (!keyHash) return undefined;
    const record = await this.findByHash(keyHash);
    return record ? { keyHash, record } : undefined;
  }

  /** False when the record no longer exists (nothing is written then). */
  async setStatus(keyHash: string, status: KeyStatus): Promise<boolean> {
    return (await this.redis.hsetExisting(keys.apiKey(keyHash), 'status', status)) === 1;
  }

  /** False when the record no longer exists (nothing is written then). */
  async setExpiry(keyHash: string, expiresAt: string): Promise<boolean> {
    return (await this.redis.hsetExisting(keys.apiKey(keyHash), 'expiresAt', expiresAt)) === 1;
  }

  /** Removes a key's record and its id index (the workspace's key set goes with the workspace). */
  async remove(keyId: string, keyHash: string | undefined): Promise<void> {
    if (keyHash) await this.redis.unlink(keys.apiKey(keyHash));
    await this.redis.unlink(keys.apiKeyId(keyId));
  }

  /** Marks or unmarks a development key (see the gate); absent means production. */
  async setDev(keyHash: string, dev: boolean): Promise<void> {
    if (dev) await this.redis.hset(keys.apiKey(keyHash), 'dev', '1');
    else await this.redis.hdel(keys.apiKey(keyHash), 'dev');
  }

  async listIds(workspaceId: string): Promise<string[]> {
    return this.redis.smembers(keys.workspaceKeys(workspaceId));
  }

  async list(workspaceId: string): Promise<ApiKeyRecord[]> {
    const ids = await this.listIds(workspaceId);
    const found = await Promise.all(ids.map((id) => this.findById(id)));
    return found
      .filter((f): f is { keyHash: string; record: ApiKeyRecord } => f !== undefined)
      .map((f) => f.record)
      .sort((a, b) => a.createdAt.localeCompare(b.createdAt) || a.keyId.localeCompare(b.keyId));
  }
}
