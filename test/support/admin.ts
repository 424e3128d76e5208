// Helpers for tests of the admin side: AdminOperations acting as a test actor, and a caller
// for the admin HTTP API on the ops listener.
import type { Redis } from 'ioredis';
import { AdminOperations, type AdminOptions } from '../../src/admin/operations.js';
import type { RunningService } from '../../src/server.js';
import { fetchRecorded, type ApiResponse } from './service.js';

export const ADMIN_TOKEN = 'test-admin-token-0123456789';

export function testOps(redis: Redis, options: AdminOptions = {}): AdminOperations {
  return new AdminOperations(redis, { actor: 'test', ...options });
}

/** Calls the admin API; `path` is relative to /admin/v1. `token: null` sends no header. The answer is recorded for the OpenAPI check. */
export async function adminCall(
  service: Pick<RunningService, 'opsUrl'>,
  method: string,
  path: string,
  options: { token?: string | null; body?: unknown; headers?: Record<string, string> } = {},
): Promise<ApiResponse> {
  const headers: Record<string, string> = { ...options.headers };
  const token = options.token === undefined ? ADMIN_TOKEN : options.token;
  if (token !== null) headers['authorization'] = `Bearer ${token}`;
  let body: string | undefined;
  if (options.body !== undefined) {
    body = JSON.stringify(options.body);
    headers['content-type'] = 'application/json';
  }
  return fetchRecorded(`${service.opsUrl}/admin/v1${path}`, method, headers, body);
}
