// API keys from birth to end: create (scope, label, expiry), list, revoke, and rotate with a
// grace period. Every change is published so that every instance drops its cached record.
import { generateApiKey, generateKeyId, hashApiKey, visiblePrefix } from '../domain/api-key.js';
import type { ApiKeyRecord, KeyScope } from '../domain/types.js';
import { conflict, notFound } from '../errors.js';
import { publishEvent } from '../store/redis/events.js';
import type { AdminContext } from './context.js';
import { parseDuration, parseLabel, parseScope, resolveExpiry, type ExpiryInput } from './inputs.js';

export interface KeyOptions extends ExpiryInput {
  readonly scope?: string | undefined;
  readonly label?: string | undefined;
}

export interface CreatedKey {
  readonly keyId: string;
  /** The raw key: shown once, to the caller who created it, and never stored. */
  readonly apiKey: string;
  readonly workspaceId: string;
  readonly prefix: string;
  readonly scope: KeyScope;
  readonly label: string | null;
  readonly expiresAt: string | null;
}

/** A key as operators see it: never the raw key, with its effective status and last use. */
export interface KeyView {
  readonly keyId: string;
  readonly workspaceId: string;
  readonly prefix: string;
  readonly label: string | null;
  readonly scope: KeyScope;
  /** `expired` is an active key whose expiry has passed: refused like a revoked one. */
  readonly status: 'active' | 'revoked' | 'expired';
  readonly createdAt: string;
  readonly expiresAt: string | null;
  readonly lastUsedAt: string | null;
  /** A development key: the editor's play-tests may use it past the gate (admin/bans.ts). */
  readonly dev: boolean;
}

export function keyView(record: ApiKeyRecord, nowMs: number, lastUsedMs?: number): KeyView {
  const expired = record.expiresAt !== undefined && Date.parse(record.expiresAt) <= nowMs;
  return {
    keyId: record.keyId,
    workspaceId: record.workspaceId,
    prefix: record.prefix,
    label: record.label ?? null,
    scope: record.scope,
    status: record.status === 'revoked' ? 'revoked' : expired ? 'expired' : 'active',
    createdAt: record.createdAt,
    expiresAt: record.expiresAt ?? null,
    lastUsedAt: lastUsedMs === undefined ? null : new Date(lastUsedMs).toISOString(),
    dev: record.dev === true,
  };
}

/** Issues a key without writing an audit entry: for callers that audit the larger action. */
export async function issueKey(ctx: AdminContext, workspaceId: string, options: KeyOptions = {}): Promise<CreatedKey> {
  const now = ctx.nowMs();
  const scope = parseScope(options.scope ?? 'write');
  const label = parseLabel(options.label);
  const expiresAt = resolveExpiry(options, now);
  const apiKey = generateApiKey();
  const keyHash = hashApiKey(apiKey);
  const record: ApiKeyRecord = {
    keyId: generateKeyId(),
    workspaceId,
    status: 'active',
    scope,
    prefix: visiblePrefix(apiKey),
    createdAt: new Date(now).toISOString(),
    expiresAt,
    label,
  };
  await ctx.apiKeys.create(keyHash, record);
  // Drops any "unknown key" an instance may have cached for this hash.
  await publishEvent(ctx.redis, { type: 'key', keyHash, created: true });
  return {
    keyId: record.keyId,
    apiKey,
    workspaceId,
    prefix: record.prefix,
    scope,
    label: label ?? null,
    expiresAt: expiresAt ?? null,
  };
}

export async function createKey(ctx: AdminContext, workspaceId: string, options: KeyOptions = {}): Promise<CreatedKey> {
  await ctx.requireWorkspace(workspaceId);
  const key = await issueKey(ctx, workspaceId, options);
  await ctx.audit('key.create', `key:${key.keyId}`, {
    workspaceId,
    details: { scope: key.scope, label: key.label, expiresAt: key.expiresAt },
  });
  return key;
}

export async function listKeys(ctx: AdminContext, workspaceId: string): Promise<KeyView[]> {
  await ctx.requireWorkspace(workspaceId);
  const [records, lastUsed] = await Promise.all([ctx.apiKeys.list(workspaceId), ctx.keyUsage.lastUsed(workspaceId)]);
  const now = ctx.nowMs();
  return records.map((r) => keyView(r, now, lastUsed.get(r.keyId)));
}

const keyNotFound = (keyId: string) => notFound(`API key ${keyId} not found`);

async function findKey(ctx: AdminContext, keyId: string) {
  const found = await ctx.apiKeys.findById(keyId);
  if (!found) throw keyNotFound(keyId);
  return found;
}

/** Revokes at once, on every instance. Revoking a revoked key changes nothing and succeeds. */
export async function revokeKey(ctx: AdminContext, keyId: string): Promise<KeyView> {
  const { keyHash, record } = await findKey(ctx, keyId);
  if (!(await ctx.apiKeys.setStatus(keyHash, 'revoked'))) throw keyNotFound(keyId);
  await publishEvent(ctx.redis, { type: 'key', keyHash });
  await ctx.audit('key.revoke', `key:${keyId}`, { workspaceId: record.workspaceId });
  return keyView({ ...record, status: 'revoked' }, ctx.nowMs());
}

export interface RotateOptions {
  /** How long the old key keeps working (see parseDuration); 0 or absent revokes it now. */
  readonly grace?: string | number | undefined;
}

export interface RotatedKey {
  /** The new key, with the old one's scope and label. Its raw key is shown once. */
  readonly key: CreatedKey;
  /** The old key after the rotation: revoked, or active until its new expiry. */
  readonly previous: KeyView;
}

export async function rotateKey(ctx: AdminContext, keyId: string, options: RotateOptions = {}): Promise<RotatedKey> {
  const { keyHash, record } = await findKey(ctx, keyId);
  const now = ctx.nowMs();
  const before = keyView(record, now);
  if (before.status !== 'active') throw conflict(`API key ${keyId} is ${before.status}: create a new key instead`);
  const graceMs = options.grace === undefined ? 0 : parseDuration(options.grace, 'grace');

  const key = await issueKey(ctx, record.workspaceId, { scope: record.scope, label: record.label });
  let previous: ApiKeyRecord;
  if (graceMs === 0) {
    if (!(await ctx.apiKeys.setStatus(keyHash, 'revoked'))) throw keyNotFound(keyId);
    previous = { ...record, status: 'revoked' };
  } else {
    // An earlier expiry the key already had is kept: rotation never extends a key's life.
    const until = Math.min(now + graceMs, record.expiresAt ? Date.parse(record.expiresAt) : Infinity);
    const expiresAt = new Date(until).toISOString();
    if (!(await ctx.apiKeys.setExpiry(keyHash, expiresAt))) throw keyNotFound(keyId);
    previous = { ...record, expiresAt };
  }
  await publishEvent(ctx.redis, { type: 'key', keyHash });
  await ctx.audit('key.rotate', `key:${keyId}`, {
    workspaceId: record.workspaceId,
    details: { newKeyId: key.keyId, graceMs, oldKeyExpiresAt: previous.expiresAt ?? null },
  });
  return { key, previous: keyView(previous, now) };
}
