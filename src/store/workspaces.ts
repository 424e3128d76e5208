// Workspace records: `pds:ws:{id}` hashes plus the set of all workspace ids.
import type { Plan, Workspace } from '../domain/types.js';
import { keys } from './keys.js';
import type { RedisClient } from './redis.js';

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

  async setPlan(id: string, plan: Plan): Promise<void> {
    await this.redis.hset(keys.workspace(id), 'plan', plan);
  }
}
