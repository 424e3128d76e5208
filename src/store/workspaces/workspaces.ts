// Workspace records: `pds:ws:{id}` hashes plus the set of all workspace ids.
import type { Plan, Workspace } from '../../domain/types.js';
import { keys } from '../keys.js';
import type { RedisClient } from '../redis/redis.js';

function toWorkspace(fields: Record<string, string>): Workspace | undefined {
  const { id, name, plan, createdAt } = fields;
  if (!id || name === undefined || (plan !== 'free' && plan !== 'pro') || !createdAt) return undefined;
  return { id, name, plan, createdAt };
}

export class WorkspaceStore {
  constructor(private readonly redis: RedisClient) {}

  async create(workspace: Workspace): Promise<void> {
    await this.redis.hset(keys.workspace(workspace.id), {
      id: workspace.id,
      name: workspace.name,
      plan: workspace.plan,
      createdAt: workspace.createdAt,
    });
    await this.redis.sadd(keys.workspaceIndex(), workspace.id);
  }

  async get(id: string): Promise<Workspace | undefined> {
    return toWorkspace(await this.redis.hgetall(keys.workspace(id)));
  }

  async exists(id: string): Promise<boolean> {
    return (await this.redis.exists(keys.workspace(id))) === 1;
  }

  /** False when the workspace no longer exists (nothing is written then). */
  async setPlan(id: string, plan: Plan): Promise<boolean> {
    return (await this.redis.hsetExisting(keys.workspace(id), 'plan', plan)) === 1;
  }

  /** False when the workspace no longer exists (nothing is written then). */
  async rename(id: string, name: string): Promise<boolean> {
    return (await this.redis.hsetExisting(keys.workspace(id), 'name', name)) === 1;
  }

  /** Every workspace, sorted by creation time. Ids whose record is gone are skipped. */
  async list(): Promise<Workspace[]> {
    const ids = await this.redis.smembers(keys.workspaceIndex());
    const found = await Promise.all(ids.map((id) => this.get(id)));
    return found
      .filter((w): w is Workspace => w !== undefined)
      .sort((a, b) => a.createdAt.localeCompare(b.createdAt) || a.id.localeCompare(b.id));
  }

  async isIndexed(id: string): Promise<boolean> {
    return (await this.redis.sismember(keys.workspaceIndex(), id)) === 1;
  }

  /** Drops the workspace from the index: the last step of a deletion. */
  async unindex(id: string): Promise<void> {
    await this.redis.srem(keys.workspaceIndex(), id);
  }
}
