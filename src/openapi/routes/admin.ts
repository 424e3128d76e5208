// The admin API's routes (ops listener, /admin/v1, only when ADMIN_TOKEN is set) as the
// OpenAPI document describes them. Adding an admin route: one adminRoute(...) line here with
// the schema its handler validates with and the schema of its answer's `data`.
import { apiKeyList, apiKeyRecord, createdKeyRecord, createdWorkspaceRecord, workspaceRecord } from '../../schemas/admin-responses.js';
import { createWorkspaceBody } from '../../schemas/admin.js';
import { adminRoute, type RouteSpec } from '../route-spec.js';

export const adminRoutes: readonly RouteSpec[] = [
  adminRoute('post', '/workspaces', 'Create a workspace and its first API key', {
    body: createWorkspaceBody,
    ok: createdWorkspaceRecord,
  }),
  adminRoute('get', '/workspaces/:id', 'Read a workspace', { ok: workspaceRecord, errors: [404] }),
  adminRoute('get', '/workspaces/:id/keys', 'List the API keys of a workspace', { ok: apiKeyList, errors: [404] }),
  adminRoute('post', '/workspaces/:id/keys', 'Create an API key for a workspace', { ok: createdKeyRecord, errors: [404] }),
  adminRoute('post', '/keys/:keyId/revoke', 'Revoke an API key, at once on every instance', { ok: apiKeyRecord, errors: [404] }),
];
