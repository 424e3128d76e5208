// The service's Prometheus metrics, in one registry served at /metrics on the ops listener.
// One process-wide instance (`metrics`), so any module can count without wiring. Components
// that already keep their own counters (the key cache, the gate) are read at scrape time
// instead, so their request path does not change.
//
// The hot path (every request, every Redis command) records into hot-metrics.ts series, a map
// lookup and a few additions; prom-client's own metrics serve the rarer events.
import { collectDefaultMetrics, Counter, Gauge, Registry } from 'prom-client';
import { REFUSAL_REASONS, VIOLATION_REASONS, type GateStatsSnapshot } from './domain/ban.js';
import { HotCounter, HotHistogram, type CounterSeries, type HistogramSeries } from './hot-metrics.js';

export interface CacheStatsSource {
  readonly stats: { readonly hits: number; readonly misses: number; readonly stale: number };
}

type KeyCacheField = 'hits' | 'misses' | 'stale';
const KEY_CACHE_HELP: Record<KeyCacheField, string> = {
  hits: 'API key lookups answered from the in-process cache.',
  misses: 'API key lookups not found in the in-process cache.',
  stale: "API key or workspace lookups Redis could not answer (a failover), answered by a cache entry past its time but no older than twice KEY_CACHE_TTL_MS.",
};

/** The platform-only access gate (src/gate/gate.ts), whose counters live in process. */
export interface GateCountersSource {
  readonly counters: GateStatsSnapshot;
}

type GateTotals = {
  violations: Record<string, number>;
  refusals: Record<string, number>;
  bansCreated: number;
  refusedNotBanned: number;
  editorDevPassed: number;
  bansRateLimited: number;
};

const zeroGate = (): GateTotals => ({
  violations: Object.fromEntries(VIOLATION_REASONS.map((r) => [r, 0])),
  refusals: Object.fromEntries(REFUSAL_REASONS.map((r) => [r, 0])),
  bansCreated: 0,
  refusedNotBanned: 0,
  editorDevPassed: 0,
  bansRateLimited: 0,
});

function addGate(into: GateTotals, from: Readonly<GateTotals> | GateStatsSnapshot): void {
  for (const [reason, n] of Object.entries(from.violations)) into.violations[reason] = (into.violations[reason] ?? 0) + n;
  for (const [reason, n] of Object.entries(from.refusals)) into.refusals[reason] = (into.refusals[reason] ?? 0) + n;
  into.bansCreated += from.bansCreated;
  into.refusedNotBanned += from.refusedNotBanned;
  into.editorDevPassed += from.editorDevPassed;
  into.bansRateLimited += from.bansRateLimited;
}

const HTTP_BUCKETS = [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5];
const REDIS_BUCKETS = [0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 1];

export class ServiceMetrics {
  readonly registry = new Registry();

  readonly httpRequests = new HotCounter(
    'pds_http_requests_total',
    'HTTP requests answered, by method, matched route and status.',
    ['method', 'route', 'status'],
    this.registry,
  );

  readonly httpDuration = new HotHistogram(
    'pds_http_request_duration_seconds',
    'Time from the first middleware to the answer, by method and matched route.',
    ['method', 'route'],
    HTTP_BUCKETS,
    this.registry,
  );

  readonly rateLimited = new Counter({
    name: 'pds_rate_limited_total',
    help: 'Requests refused with 429, by the workspace plan.',
    labelNames: ['plan'] as const,
    registers: [this.registry],
  });

  readonly redisDuration = new HotHistogram(
    'pds_redis_command_duration_seconds',
    'Redis command latency as the service sees it (queueing and round trip), by command.',
    ['command'],
    REDIS_BUCKETS,
    this.registry,
  );

  readonly redisErrors = new HotCounter(
    'pds_redis_command_errors_total',
    'Redis commands that failed (error reply, timeout, connection loss), by command.',
    ['command'],
    this.registry,
  );

  readonly redisFailoverEvents = new Counter({
    name: 'pds_redis_failover_events_total',
    help: 'Redis failures an operator sees during a failover or a restart (store/redis/failover-log.ts), by kind: moved, ask, clusterdown, tryagain, redirections, connection, timeout, unavailable. Logged at warn, at most one line per kind a second.',
    labelNames: ['kind'] as const,
    registers: [this.registry],
  });

  readonly erasuresRequested = new Counter({
    name: 'pds_erasures_requested_total',
    help: 'Erasure jobs this process recorded, by source (webhook, cli, admin-api, console); a repeated notification is not counted.',
    labelNames: ['source'] as const,
    registers: [this.registry],
  });

  readonly erasuresDone = new Counter({
    name: 'pds_erasures_done_total',
    help: 'Erasure jobs this process finished (state done, or unmapped when a game of the request has no workspace).',
    registers: [this.registry],
  });

  readonly erasureAttemptsFailed = new Counter({
    name: 'pds_erasure_attempts_failed_total',
    help: 'Erasure attempts that failed on this process; each is retried later.',
    registers: [this.registry],
  });

  readonly erasureJobs = new Gauge({
    name: 'pds_erasure_jobs',
    help: 'Erasure jobs of the whole installation by state (pending, failed, unmapped), as this instance last read them: the same on every instance, so take max, not sum.',
    labelNames: ['state'] as const,
    registers: [this.registry],
  });

  /**
   * Per workspace at or over 80% of its storage quota (what the quota weighs over the quota),
   * as this instance last learned its total: a workspace falling back under 80% loses its series,
   * so the label's values are bounded by the workspaces near their quota (saves/quota-warnings.ts).
   */
  readonly storageQuotaUsed = new Gauge({
    name: 'pds_storage_quota_used_ratio',
    help: "Storage a workspace's quota weighs (data, boards, kept answers, waiting messages, held sessions; not history) over its plan's quota, for workspaces at or above 0.8 whose total this instance has learned; the same on every instance that knows it, so take max, not sum.",
    labelNames: ['workspace'] as const,
    registers: [this.registry],
  });

  private readonly keyCaches = new Set<CacheStatsSource>();
  /** Counts of caches no longer tracked, so the totals never go down. */
  private readonly retired = { hits: 0, misses: 0, stale: 0 };
  private readonly gates = new Set<GateCountersSource>();
  private readonly retiredGates = zeroGate();
  private defaultsOn = false;

  private readonly requestSeries = new Map<
    string,
    Map<string, Map<number, { count: CounterSeries; duration: HistogramSeries }>>
  >();
  private readonly redisSeries = new Map<string, { duration: HistogramSeries; errors: CounterSeries }>();

  constructor() {
    const caches = this.keyCaches;
    const retired = this.retired;
    const total = (field: KeyCacheField) => {
      let sum = retired[field];
      for (const source of caches) sum += source.stats[field];
      return sum;
    };
    for (const field of ['hits', 'misses', 'stale'] as const) {
      new Counter({
        name: `pds_key_cache_${field}_total`,
        help: KEY_CACHE_HELP[field],
        registers: [this.registry],
        collect() {
          this.reset();
          this.inc(total(field));
        },
      });
    }
    this.registerGateCounters();
  }

  private registerGateCounters(): void {
    const gates = this.gates;
    const retired = this.retiredGates;
    const totals = () => {
      const sum = zeroGate();
      addGate(sum, retired);
      for (const gate of gates) addGate(sum, gate.counters);
      return sum;
    };
    const byReason = (name: string, help: string, pick: (t: GateTotals) => Record<string, number>) =>
      new Counter({
        name,
        help,
        labelNames: ['reason'] as const,
        registers: [this.registry],
        collect() {
          this.reset();
          for (const [reason, n] of Object.entries(pick(totals()))) this.inc({ reason }, n);
        },
      });
    byReason('pds_gate_refusals_total', 'Requests the platform-only access gate answered with 403, by reason.', (t) => t.refusals);
    byReason('pds_gate_violations_total', 'Requests failing a gate check, by reason (one request may count under several).', (t) => t.violations);
    const single = (name: string, help: string, pick: (t: GateTotals) => number) =>
      new Counter({
        name,
        help,
        registers: [this.registry],
        collect() {
          this.reset();
          this.inc(pick(totals()));
        },
      });
    single('pds_gate_bans_created_total', 'Addresses the gate banned automatically (enforce mode).', (t) => t.bansCreated);
    single(
      'pds_gate_refused_not_banned_total',
      'Enforce-mode violations refused without a ban (unknown, loopback, private or platform addresses).',
      (t) => t.refusedNotBanned,
    );
    single(
      'pds_gate_bans_rate_limited_total',
      "Enforce-mode violations refused without a ban because GATE_BAN_MAX_PER_MINUTE, or the violator's network's share of it, was reached.",
      (t) => t.bansRateLimited,
    );
    single('pds_gate_editor_dev_passed_total', 'Editor play-test requests let through with a development key.', (t) => t.editorDevPassed);
  }

  /**
   * With WORKERS > 1 every worker serves the ops port and keeps its own counts, so a scrape
   * answers from whichever worker took the connection. The label keeps each worker's series
   * apart, so none seems to go backwards when the next scrape lands on another worker.
   */
  labelWorker(id: string): void {
    this.registry.setDefaultLabels({ worker: id });
  }

  /** Process metrics (CPU, memory, event loop lag, GC): started once, by the running service. */
  enableDefaultMetrics(): void {
    if (this.defaultsOn) return;
    this.defaultsOn = true;
    collectDefaultMetrics({ register: this.registry });
  }

  /** Reports a cache's hits and misses at scrape time; call the returned function to stop. */
  trackKeyCache(source: CacheStatsSource): () => void {
    this.keyCaches.add(source);
    return () => {
      if (!this.keyCaches.delete(source)) return;
      this.retired.hits += source.stats.hits;
      this.retired.misses += source.stats.misses;
      this.retired.stale += source.stats.stale;
    };
  }

  /** Reports a gate's counters at scrape time; call the returned function to stop. */
  trackGate(source: GateCountersSource): () => void {
    this.gates.add(source);
    return () => {
      if (!this.gates.delete(source)) return;
      addGate(this.retiredGates, source.counters);
    };
  }

  observeRequest(method: string, route: string, status: number, seconds: number): void {
    // Nested maps rather than one joined key: the route and method strings are the same
    // objects on every request, so their hashes are cached, and no key string is built.
    let byMethod = this.requestSeries.get(route);
    if (!byMethod) this.requestSeries.set(route, (byMethod = new Map()));
    let byStatus = byMethod.get(method);
    if (!byStatus) byMethod.set(method, (byStatus = new Map()));
    let series = byStatus.get(status);
    if (!series) {
      series = {
        count: this.httpRequests.series(method, route, String(status)),
        duration: this.httpDuration.series(method, route),
      };
      byStatus.set(status, series);
    }
    series.count.inc();
    series.duration.observe(seconds);
  }

  observeRedisCommand(command: string, seconds: number, failed: boolean): void {
    let series = this.redisSeries.get(command);
    if (!series) {
      series = { duration: this.redisDuration.series(command), errors: this.redisErrors.series(command) };
      this.redisSeries.set(command, series);
    }
    series.duration.observe(seconds);
    if (failed) series.errors.inc();
  }
}

export const metrics = new ServiceMetrics();
