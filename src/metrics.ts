// The service's Prometheus metrics, in one registry served at /metrics on the ops listener.
// One process-wide instance (`metrics`), so any module can count without wiring: e.g. the IP
// gate calls `metrics.gateRefusals.inc({ reason })`.
//
// The hot path pays a map lookup and one observe per request and per Redis command: labelled
// children are cached by their label values, because prom-client hashes the label object on
// every `inc({...})` call.
import { collectDefaultMetrics, Counter, Histogram, Registry } from 'prom-client';

export interface CacheStatsSource {
  readonly stats: { readonly hits: number; readonly misses: number };
}

type Child = { inc(value?: number): void };
type HistogramChild = { observe(value: number): void };

const HTTP_BUCKETS = [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5];
const REDIS_BUCKETS = [0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 1];

export class ServiceMetrics {
  readonly registry = new Registry();

  readonly httpRequests = new Counter({
    name: 'pds_http_requests_total',
    help: 'HTTP requests answered, by method, matched route and status.',
    labelNames: ['method', 'route', 'status'] as const,
    registers: [this.registry],
  });

  readonly httpDuration = new Histogram({
    name: 'pds_http_request_duration_seconds',
    help: 'Time from the first middleware to the answer, by method and matched route.',
    labelNames: ['method', 'route'] as const,
    buckets: HTTP_BUCKETS,
    registers: [this.registry],
  });

  readonly rateLimited = new Counter({
    name: 'pds_rate_limited_total',
    help: 'Requests refused with 429, by the workspace plan.',
    labelNames: ['plan'] as const,
    registers: [this.registry],
  });

  readonly redisDuration = new Histogram({
    name: 'pds_redis_command_duration_seconds',
    help: 'Redis command latency as the service sees it (queueing and round trip), by command.',
    labelNames: ['command'] as const,
    buckets: REDIS_BUCKETS,
    registers: [this.registry],
  });

  readonly redisErrors = new Counter({
    name: 'pds_redis_command_errors_total',
    help: 'Redis commands that failed (error reply, timeout, connection loss), by command.',
    labelNames: ['command'] as const,
    registers: [this.registry],
  });

  /** For the IP gate: requests refused before authentication, by reason. */
  readonly gateRefusals = new Counter({
    name: 'pds_gate_refusals_total',
    help: 'Requests refused by the IP gate, by reason.',
    labelNames: ['reason'] as const,
    registers: [this.registry],
  });

  private readonly keyCaches = new Set<CacheStatsSource>();
  /** Counts of caches no longer tracked, so the totals never go down. */
  private readonly retired = { hits: 0, misses: 0 };
  private defaultsOn = false;

  private readonly requestChildren = new Map<string, { count: Child; duration: HistogramChild }>();
  private readonly redisChildren = new Map<string, { duration: HistogramChild; errors: Child }>();

  constructor() {
    const caches = this.keyCaches;
    const retired = this.retired;
    const total = (field: 'hits' | 'misses') => {
      let sum = retired[field];
      for (const source of caches) sum += source.stats[field];
      return sum;
    };
    for (const field of ['hits', 'misses'] as const) {
      new Counter({
        name: `pds_key_cache_${field}_total`,
        help: `API key lookups ${field === 'hits' ? 'answered from' : 'not found in'} the in-process cache.`,
        registers: [this.registry],
        collect() {
          this.reset();
          this.inc(total(field));
        },
      });
    }
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
    };
  }

  observeRequest(method: string, route: string, status: number, seconds: number): void {
    const id = `${method} ${route} ${status}`;
    let child = this.requestChildren.get(id);
    if (!child) {
      child = {
        count: this.httpRequests.labels(method, route, String(status)),
        duration: this.httpDuration.labels(method, route),
      };
      this.requestChildren.set(id, child);
    }
    child.count.inc();
    child.duration.observe(seconds);
  }

  private redisChild(command: string) {
    let child = this.redisChildren.get(command);
    if (!child) {
      child = { duration: this.redisDuration.labels(command), errors: this.redisErrors.labels(command) };
      this.redisChildren.set(command, child);
    }
    return child;
  }

  observeRedisCommand(command: string, seconds: number, failed: boolean): void {
    const child = this.redisChild(command);
    child.duration.observe(seconds);
    if (failed) child.errors.inc();
  }
}

export const metrics = new ServiceMetrics();
