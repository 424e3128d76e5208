// Every administrative operation, in one place, so the command line and the admin HTTP API
// cannot drift apart. Each operation validates its input, writes through the stores, and
// publishes the cache invalidation that makes the change visible on every instance at once.
import {
  generateApiKey,
  generateKeyId,
  generateWorkspaceId,
  hashApiKey,
  visiblePrefix,
} from '../domain/api-key.js';
import { isWorkspaceId } from '../domain/ids.js';
import { PLANS, type ApiKeyRecord, type KeyScope, type Plan, type Workspace } from '../domain/types.js';
import { badRequest, notFound } from '../errors.js';
import { ApiKeyStore } from '../store/api-keys.js';
import { publishEvent } from '../store/events.js';
import type { RedisClient } from '../store/redis.js';
import { WorkspaceStore } from '../store/workspaces.js';

export interface CreatedKey {
  readonly keyId: string;
  /** The raw key: shown once, to the caller who created it, and never stored. */
  readonly apiKey: string;
  readonly workspaceId: string;
}

export interface CreatedWorkspace extends CreatedKey {
  readonly name: string;
  readonly plan: Plan;
}

export interface KeyOptions {
  readonly scope?: KeyScope;
  readonly label?: string;
  readonly expiresAt?: string;
}

const NAME_MAX = 100;

export class AdminOperations {
  readonly workspaces: WorkspaceStore;
  readonly apiKeys: ApiKeyStore;

  constructor(
    /** Public so that sibling operation modules (admin/bans.ts) share the connection. */
    readonly redis: RedisClient,
    private readonly clock: () => number = Date.now,
  ) {
    this.workspaces = new WorkspaceStore(redis);
    this.apiKeys = new ApiKeyStore(redis);
  }

  private now(): string {
    return new Date(this.clock()).toISOString();
  }

  async createWorkspace(input: { name: string; plan?: string; id?: string }): Promise<CreatedWorkspace> {
    const name = input.name.trim();
    if (name.length === 0 || name.length > NAME_MAX) {
      throw badRequest(`Workspace name must be 1-${NAME_MAX} characters`);
    }
    const plan = parsePlan(input.plan ?? 'free');
    const id = input.id ?? generateWorkspaceId();
    if (!isWorkspaceId(id)) throw badRequest('Workspace id must be 1-64 characters from A-Z a-z 0-9 _ -');
    const workspace: Workspace = { id, name, plan, createdAt: this.now() };
    await this.workspaces.create(workspace);
    await publishEvent(this.redis, { type: 'workspace', workspaceId: id });
    const key = await this.createKey(id);
    return { workspaceId: id, name, plan, keyId: key.keyId, apiKey: key.apiKey };
  }

  async getWorkspace(id: string): Promise<Workspace> {
    const workspace = isWorkspaceId(id) ? await this.workspaces.get(id) : undefined;
    if (!workspace) throw notFound(`Workspace ${id} not found`);
    return workspace;
  }

  async createKey(workspaceId: string, options: KeyOptions = {}): Promise<CreatedKey> {
    await this.getWorkspace(workspaceId);
    const apiKey = generateApiKey();
    const keyHash = hashApiKey(apiKey);
    const record: ApiKeyRecord = {
      keyId: generateKeyId(),
      workspaceId,
      status: 'active',
      scope: options.scope ?? 'write',
      prefix: visiblePrefix(apiKey),
      createdAt: this.now(),
      expiresAt: options.expiresAt,
      label: options.label,
    };
    await this.apiKeys.create(keyHash, record);
    // Drops any "unknown key" an instance may have cached for this hash.
    await publishEvent(this.redis, { type: 'key', keyHash });
    return { keyId: record.keyId, apiKey, workspaceId };
  }

  async revokeKey(keyId: string): Promise<ApiKeyRecord> {
    const found = await this.apiKeys.findById(keyId);
    if (!found) throw notFound(`API key ${keyId} not found`);
    await this.apiKeys.setStatus(found.keyHash, 'revoked');
    await publishEvent(this.redis, { type: 'key', keyHash: found.keyHash });
    return { ...found.record, status: 'revoked' };
  }

  async listKeys(workspaceId: string): Promise<ApiKeyRecord[]> {
    await this.getWorkspace(workspaceId);
    return this.apiKeys.list(workspaceId);
  }
}

export function parsePlan(raw: string): Plan {
  if (!(PLANS as readonly string[]).includes(raw)) {
    throw badRequest(`Plan must be one of ${PLANS.join(', ')}, got "${raw}"`);
  }
  return raw as Plan;
}
