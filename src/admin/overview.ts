// The installation at a glance, for the console's home page: the last hour's traffic of every
// instance (per minute: requests, 429s, 5xx, p50 and p99), Redis's memory against maxmemory,
// the instances alive, the busiest workspaces by requests and by storage, the newest bans in
// force, and the gate's mode. Read from what the instances publish to Redis
// (store/installation/traffic-stats.ts) and what Redis already holds: a few dozen commands,
// whatever the traffic, so the page can refresh itself. Not audited: it shows no player's data.
import type { GateConfig } from '../config.js';
import type { BanRecord } from '../domain/ban.js';
import { isoTime } from '../domain/entry.js';
import type { GateMode, Plan } from '../domain/types.js';
import { BanStore } from '../store/installation/bans.js';
import {
  LATENCY_BOUNDS_MS,
  readLargestWorkspaces,
  readMemory,
  readTraffic,
  type MinuteTotals,
} from '../store/installation/traffic-stats.js';
import { percentOfQuota, QUOTA_WARNING_LEVELS } from '../saves/quota-warnings.js';
import { quotaBytesOf } from '../saves/storage-quota.js';
import { forgetQuotaWarned, readQuotaWarned } from '../store/workspaces/quota-levels.js';
import { readStorageTotals } from '../store/workspaces/storage-usage.js';
import type { AdminContext } from './context.js';

const MINUTES = 60;
const TOP = 5;
const RECENT_BANS = 8;
const NEAR_QUOTA = 20;

export interface NearQuota {
  readonly workspaceId: string;
  readonly name: string;
  readonly plan: Plan;
  readonly usedBytes: number;
  readonly quotaBytes: number;
  readonly percent: number;
}

export interface MinuteView {
  readonly at: string;
  readonly requests: number;
  readonly limited: number;
  readonly errors: number;
  readonly p50Ms: number | null;
  readonly p99Ms: number | null;
}

export interface BusyWorkspace {
  readonly workspaceId: string;
  readonly name: string | null;
  readonly value: number;
}

export interface Overview {
  readonly at: string;
  readonly minutes: readonly MinuteView[];
  readonly totals: Omit<MinuteView, 'at'>;
  readonly memory: { readonly usedBytes: number; readonly maxBytes: number; readonly policy: string; readonly nodes: number };
  readonly instances: ReadonlyArray<{ id: string; host: string; pid: number; startedAt: string; lastSeenAt: string; gateMode: GateMode }>;
  readonly busiestByRequests: readonly BusyWorkspace[];
  readonly busiestByStorage: readonly BusyWorkspace[];
  readonly nearQuota: readonly NearQuota[];
  readonly recentBans: ReadonlyArray<Pick<BanRecord, 'address' | 'bannedAt' | 'source' | 'reasons'>>;
  readonly gateMode: GateMode;
}

/**
 * The latency below which a share `q` of the answers fell, read from the histogram: linear
 * within the bucket it falls in (the top bucket, above 10 s, answers its lower bound).
 */
export function percentile(buckets: readonly number[], q: number): number | null {
  const total = buckets.reduce((a, b) => a + b, 0);
  if (total === 0) return null;
  const rank = q * total;
  let seen = 0;
  for (let i = 0; i < buckets.length; i++) {
    const n = buckets[i]!;
    if (n > 0 && seen + n >= rank) {
      const low = i === 0 ? 0 : LATENCY_BOUNDS_MS[i - 1]!;
      const high = LATENCY_BOUNDS_MS[i] ?? low;
      return Math.round((low + ((rank - seen) / n) * (high - low)) * 100) / 100;
    }
    seen += n;
  }
  return LATENCY_BOUNDS_MS[LATENCY_BOUNDS_MS.length - 1]!;
}

function view(m: Omit<MinuteTotals, 'minute'>): Omit<MinuteView, 'at'> {
  return { requests: m.requests, limited: m.limited, errors: m.errors, p50Ms: percentile(m.latency, 0.5), p99Ms: percentile(m.latency, 0.99) };
}

function addUp(minutes: readonly MinuteTotals[]): Omit<MinuteTotals, 'minute'> {
  const latency = new Array<number>(LATENCY_BOUNDS_MS.length + 1).fill(0);
  let requests = 0;
  let limited = 0;
  let errors = 0;
  for (const m of minutes) {
    requests += m.requests;
    limited += m.limited;
    errors += m.errors;
    m.latency.forEach((n, i) => (latency[i]! += n));
  }
  return { requests, limited, errors, latency };
}

async function named(ctx: AdminContext, ranked: ReadonlyArray<readonly [string, number]>): Promise<BusyWorkspace[]> {
  const found = await Promise.all(ranked.map(([id]) => ctx.workspaces.get(id)));
  return ranked.map(([workspaceId, value], i) => ({ workspaceId, name: found[i]?.name ?? null, value }));
}

/**
 * The workspaces at or over the first warning level of their quota, fullest first: those the
 * quota's warnings put in the overview's set (saves/quota-warnings.ts), each weighed again from
 * its total now. A deleted workspace is dropped from the set on the way.
 */
async function nearQuota(ctx: AdminContext): Promise<NearQuota[]> {
  const ids = await readQuotaWarned(ctx.redis, NEAR_QUOTA);
  const found = await Promise.all(
    ids.map(async (id) => {
      const workspace = await ctx.workspaces.get(id);
      if (workspace === null || workspace === undefined) {
        await forgetQuotaWarned(ctx.redis, id);
        return undefined;
      }
      const usedBytes = quotaBytesOf(await readStorageTotals(ctx.redis, id, { nowMs: ctx.nowMs() }));
      const quotaBytes = ctx.storageQuota[workspace.plan];
      return { workspaceId: id, name: workspace.name, plan: workspace.plan, usedBytes, quotaBytes, percent: percentOfQuota(usedBytes, quotaBytes) };
    }),
  );
  return found.filter((w): w is NearQuota => w !== undefined && w.percent >= QUOTA_WARNING_LEVELS[0]).sort((a, b) => b.percent - a.percent);
}

export async function overview(ctx: AdminContext, gate: Pick<GateConfig, 'mode'>, statsFlushMs: number): Promise<Overview> {
  const now = ctx.nowMs();
  const [traffic, largest, memory, recentBans, near] = await Promise.all([
    readTraffic(ctx.redis, now, { count: MINUTES, top: TOP, aliveMs: 3 * statsFlushMs }),
    readLargestWorkspaces(ctx.redis, TOP),
    readMemory(ctx.redis),
    new BanStore(ctx.redis).recent(RECENT_BANS),
    nearQuota(ctx),
  ]);
  const [busiestByRequests, busiestByStorage] = await Promise.all([named(ctx, traffic.busiest), named(ctx, largest)]);
  return {
    at: isoTime(now),
    minutes: traffic.minutes.map((m) => ({ at: isoTime(m.minute), ...view(m) })),
    totals: view(addUp(traffic.minutes)),
    memory,
    instances: traffic.instances.map((i) => ({
      id: i.id,
      host: i.host,
      pid: i.pid,
      startedAt: isoTime(i.startedAt),
      lastSeenAt: isoTime(i.lastSeen),
      gateMode: i.gateMode as GateMode,
    })),
    busiestByRequests,
    // A deleted workspace's leftover entry is not shown.
    busiestByStorage: busiestByStorage.filter((w) => w.name !== null),
    nearQuota: near,
    recentBans,
    gateMode: gate.mode,
  };
}

const MEANING: Record<GateMode, string> = {
  off: 'No checks and no automatic bans. Bans made by an operator still apply; automatic bans made earlier by the gate stay stored and apply again when the gate is on.',
  report: 'Requests are checked and violations recorded, nobody is refused for them. Every ban in the list applies (operator and automatic).',
  enforce: 'Requests are checked; a violating address is refused and banned automatically (within GATE_BAN_MAX_PER_MINUTE). Every ban in the list applies.',
};

/** The gate's settings on this instance, with what its mode means, for the bans page. */
export function gateState(config: GateConfig) {
  return {
    mode: config.mode,
    meaning: MEANING[config.mode],
    checks: { userAgent: config.checkUserAgent, robloxId: config.checkRobloxId, addressRanges: config.allowedCidrs.length },
    banMaxPerMinute: config.banMaxPerMinute,
  };
}
