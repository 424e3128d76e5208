// A workspace's usage: requests and 429s per UTC day (counted in memory by each instance and
// added every USAGE_FLUSH_MS, store/workspaces/usage-counter.ts), the number of players with data, and when each key was last used.
//
// Players are counted on demand by SCAN over every master rather than by a counter kept on
// the hot path: a counter would need set, increment and delete to know whether a player's
// hash appeared or vanished, and on a cluster that hash and the workspace's counter live in
// different slots, so no script could keep them in step. SCAN costs nothing until an
// operator asks, is exact for a quiet workspace, and never blocks Redis (it pages); its cost
// grows with the whole keyspace, roughly a second per few million keys.
import { keys } from '../store/keys.js';
import { usageDay } from '../store/workspaces/usage-counter.js';
import { countMatching } from '../store/redis/scan.js';
import type { AdminContext } from './context.js';
import { keyView, type KeyView } from './key-lifecycle.js';

export interface DayUsage {
  /** UTC day, YYYY-MM-DD. */
  readonly date: string;
  readonly requests: number;
  /** Requests refused with 429. */
  readonly limited: number;
}

export interface UsageReport {
  readonly workspaceId: string;
  readonly name: string;
  readonly plan: string;
  /** Newest first, one entry per day, days without traffic included as zeros. */
  readonly days: DayUsage[];
  readonly totals: { readonly requests: number; readonly limited: number };
  readonly players: number;
  readonly keys: KeyView[];
}

export const USAGE_DAYS_DEFAULT = 30;
const DAY_MS = 86_400_000;

function count(raw: string | undefined): number {
  const n = Number(raw ?? 0);
  return Number.isSafeInteger(n) && n > 0 ? n : 0;
}

export async function usageReport(ctx: AdminContext, workspaceId: string, days = USAGE_DAYS_DEFAULT): Promise<UsageReport> {
  const workspace = await ctx.requireWorkspace(workspaceId);
  const now = ctx.nowMs();
  const dayNames = Array.from({ length: days }, (_, i) => usageDay(now - i * DAY_MS));
  // The day hashes share the workspace's slot; issued together they travel in one pipeline.
  const [perDay, players, records, lastUsed] = await Promise.all([
    Promise.all(dayNames.map((day) => ctx.redis.hmget(keys.usage(workspaceId, day), 'requests', 'limited'))),
    countMatching(ctx.redis, keys.playerHashPattern(workspaceId)),
    ctx.apiKeys.list(workspaceId),
    ctx.keyUsage.lastUsed(workspaceId),
  ]);
  const daily = dayNames.map((day, i) => ({
    date: `${day.slice(0, 4)}-${day.slice(4, 6)}-${day.slice(6, 8)}`,
    requests: count(perDay[i]?.[0] ?? undefined),
    limited: count(perDay[i]?.[1] ?? undefined),
  }));
  return {
    workspaceId,
    name: workspace.name,
    plan: workspace.plan,
    days: daily,
    totals: {
      requests: daily.reduce((sum, d) => sum + d.requests, 0),
      limited: daily.reduce((sum, d) => sum + d.limited, 0),
    },
    players,
    keys: records.map((r) => keyView(r, now, lastUsed.get(r.keyId))),
  };
}
