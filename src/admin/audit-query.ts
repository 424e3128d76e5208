// Reading the audit trail, filtered: by workspace, action (exact, or a family such as
// `player.*`), actor and time range. The list is newest first, so a range's start ends the
// walk; the store reads it in pages, so a filter never loads the whole list at once.
import { badRequest } from '../errors.js';
import type { AuditEntry, AuditLogStore } from '../store/installation/audit-log.js';
import { parsePositiveInt } from './inputs.js';

export const AUDIT_READ_MAX = 10_000;

export interface AuditQuery {
  readonly limit?: string | number | undefined;
  readonly workspaceId?: string | undefined;
  readonly action?: string | undefined;
  readonly actor?: string | undefined;
  /** ISO 8601 times, inclusive. */
  readonly since?: string | undefined;
  readonly until?: string | undefined;
}

function parseTime(raw: string, what: string): number {
  const at = Date.parse(raw);
  if (!/^\d{4}-\d{2}-\d{2}/.test(raw) || Number.isNaN(at)) throw badRequest(`${what} must be an ISO 8601 time such as 2030-01-31T00:00:00Z, got "${raw}"`);
  return at;
}

export function readAudit(log: AuditLogStore, options: AuditQuery = {}): Promise<AuditEntry[]> {
  const limit = parsePositiveInt(options.limit ?? 50, 'limit', AUDIT_READ_MAX);
  const since = options.since === undefined ? undefined : parseTime(options.since, 'since');
  const until = options.until === undefined ? undefined : parseTime(options.until, 'until');
  const { workspaceId, action, actor } = options;
  if (!workspaceId && !action && !actor && since === undefined && until === undefined) return log.list(limit);
  const prefix = action?.endsWith('*') ? action.slice(0, -1) : undefined;
  return log.list(limit, {
    keep: (e) =>
      (!workspaceId || e.workspaceId === workspaceId) &&
      (!action || (prefix !== undefined ? e.action.startsWith(prefix) : e.action === action)) &&
      (!actor || e.actor === actor) &&
      (until === undefined || Date.parse(e.at) <= until),
    stopAfter: since === undefined ? undefined : (e) => Date.parse(e.at) < since,
  });
}
