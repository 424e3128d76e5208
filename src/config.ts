// The only reader of process.env. Every setting is parsed, range-checked and frozen here;
// a bad value stops the start with a message naming the variable.
import { parseCidrList, parseIp } from './domain/address.js';
import type { GateMode, Plan } from './domain/types.js';

import { availableParallelism } from 'node:os';

export type { GateMode, Plan };

export type LogLevel = 'fatal' | 'error' | 'warn' | 'info' | 'debug' | 'trace' | 'silent';

export interface Config {
  readonly port: number;
  readonly host: string;
  /** `REDIS_URL` as given, or undefined when unset (callers pick their own default). */
  readonly redisUrl: string | undefined;
  /** `REDIS_CLUSTER_NODES` seeds; when set, the service talks to a Redis Cluster instead of REDIS_URL. */
  readonly redisClusterNodes: readonly RedisNode[] | undefined;
  /** appendfsync of the redis-server the quick start runs itself (not applied to other Redis). */
  readonly redisAppendfsync: 'always' | 'everysec' | 'no';
  readonly logLevel: LogLevel;
  readonly nodeEnv: string;
  readonly limits: {
    readonly maxBodyBytes: number;
    readonly maxValueDepth: number;
    readonly maxKeysPerPlayer: number;
    /** Most bytes of data one player may hold: key names plus stored entries (PLAYER_TOO_LARGE beyond). */
    readonly maxPlayerBytes: number;
    /** Bytes a second of large answers and bodies per workspace on one instance (http/byte-budget.ts); 0 is off. */
    readonly workspaceBytesPerSecond: number;
  };
  /** Each player's restore points (lua/includes/restore-points.lua, docs/history.md). */
  readonly history: {
    /** A restore point per interval in which the player was written; 0 keeps no history. */
    readonly intervalMs: number;
    /** Most restore points kept; 0 keeps no history. */
    readonly maxVersions: number;
    /** Every point younger than this is kept; older ones are thinned to the first of each UTC hour. */
    readonly fineMs: number;
    /** Points older than this (and than fineMs) are thinned to the first of each UTC day instead of each hour. */
    readonly hourlyMs: number;
    /** Points older than this leave Redis, the newest included (saves/history-sweep.ts for an idle player's). */
    readonly maxAgeMs: number;
    /** Most bytes kept; the newest point is kept whatever its size. */
    readonly maxBytes: number;
    /** A workspace's history bound, as a share of its plan's storage quota (docs/history.md). */
    readonly quotaShare: number;
    /** How often each instance runs the history sweep over each workspace. */
    readonly sweepMs: number;
  };
  readonly sessions: {
    /** Lease of a session when acquire names none. */
    readonly defaultTtlSeconds: number;
  };
  /** Messages to players (saves/player-messages.ts): INBOX_FULL and PAYLOAD_TOO_LARGE beyond these. */
  readonly messages: {
    /** Most bytes of one message, as JSON. */
    readonly maxBytes: number;
    /** Most messages waiting for one player. */
    readonly maxWaiting: number;
    /** How long a message waits when the sender names no time. */
    readonly defaultTtlSeconds: number;
    /** The longest a sender may name. */
    readonly maxTtlSeconds: number;
  };
  /** How long the first answer to an Idempotency-Key is kept. */
  readonly idempotencyTtlSeconds: number;
  /** How long a workspace at or over its storage quota keeps them (saves/storage-quota.ts). */
  readonly idempotencyTtlOverQuotaSeconds: number;
  /** On a cluster, how long a claim of an Idempotency-Key waits out its master's failover (saves/idempotency.ts). */
  readonly idempotencyClaimFailoverMs: number;
  /** Each workspace's stored bytes (data and history), by plan (saves/storage-quota.ts). */
  readonly storage: {
    readonly quotaBytes: Readonly<Record<Plan, number>>;
    /** How often each instance adds its writes' byte counts to the workspace totals in Redis. */
    readonly flushMs: number;
    /** How old a total read from Redis may be before a write of that workspace reads it again. */
    readonly refreshMs: number;
  };
  /** Leaderboards (docs/leaderboards.md): TOO_MANY_BOARDS and BOARD_FULL beyond these. */
  readonly leaderboards: {
    /** Most boards a workspace may have. */
    readonly maxBoards: number;
    /** Most entries one period of a board may hold. */
    readonly maxEntries: number;
  };
  readonly rateLimit: {
    readonly windowMs: number;
    readonly plans: Readonly<Record<Plan, number>>;
    /** Most requests an instance takes from a window's budget ahead of time (store/workspaces/rate-limiter.ts). */
    readonly leaseAhead: number;
    /** How often each instance adds its usage counts (requests, 429s per day) to Redis. */
    readonly usageFlushMs: number;
    /**
     * How long an instance answers a workspace from its last share of the window while the
     * window's Redis master does not answer (store/workspaces/rate-limiter.ts); 0: not at all.
     */
    readonly failoverMs: number;
  };
  readonly redis: {
    readonly commandTimeoutMs: number;
    readonly connectTimeoutMs: number;
    /**
     * Commands issued in the same turn of the event loop leave in one write: store/redis/write-batching.ts
     * on a single server, ioredis's enableAutoPipelining on a cluster.
     */
    readonly autoPipelining: boolean;
  };
  readonly keyCache: {
    readonly ttlMs: number;
    readonly maxEntries: number;
    /** Unknown keys are remembered apart, so a flood of made-up keys never evicts real ones. */
    readonly maxUnknownEntries: number;
  };
  /** 401s an address (an IPv6 /64) may get per minute on one instance before its unknown keys get 429. */
  readonly authFailuresPerMinute: number;
  /** How often each instance writes the API keys' last-use times to Redis. */
  readonly keyLastUsedFlushMs: number;
  /** How often each instance adds the players it saw written to each workspace's players list. */
  readonly playerIndexFlushMs: number;
  /** How often each instance adds its traffic summary (and its heartbeat) for the console's overview. */
  readonly statsFlushMs: number;
  /** How many audit entries are kept (the oldest are dropped beyond). */
  readonly auditMaxEntries: number;
  readonly admin: {
    /** ADMIN_TOKEN; the admin API is off when unset. */
    readonly token: string | undefined;
    readonly port: number;
    readonly host: string;
    /** Wrong bearer tokens one address (an IPv6 /64) may send per window before the admin API answers it 429. */
    readonly authFailures: number;
    readonly authWindowMs: number;
  };
  readonly http: {
    /** A request whose headers have not all arrived by then is cut off (408). */
    readonly headersTimeoutMs: number;
    /** A request not fully received by then (headers and body) is cut off (408). */
    readonly requestTimeoutMs: number;
  };
  readonly shutdownGraceMs: number;
  /** After SIGTERM, how long /readyz answers 503 while requests are still served, before closing. */
  readonly shutdownDrainMs: number;
  readonly gate: GateConfig;
  /** The operator console (/console/ on the ops listener, on whenever the admin API is). */
  readonly console: ConsoleConfig;
  /** Processes serving the shared port (node:cluster); 1 runs in the main process. */
  readonly workers: number;
  /** The right to erasure: digests, tombstones, the background jobs (docs/erasure.md). */
  readonly erasure: ErasureConfig;
  /** The platform's webhook (`POST /api/v1/webhooks/roblox`), on when its secret is set. */
  readonly robloxWebhook: RobloxWebhookConfig;
}

/** Erasure of players (src/erasure/): see docs/erasure.md. */
export interface ErasureConfig {
  /**
   * Key of the digests that stand for a user id in tombstones and the audit trail. Unset: no
   * erasure can be made, and an import refuses to run once the installation holds tombstones.
   */
  readonly digestSecret: string | undefined;
  /** How long a tombstone (and a notification id seen) is kept. */
  readonly tombstoneMs: number;
  /** A job untouched this long by the instance running it is taken over by another. */
  readonly claimIdleMs: number;
  /** 0: never; else after an erasure every Redis node rewrites its AOF (or saves its RDB) at most this often. */
  readonly aofRewriteMs: number;
}

export interface RobloxWebhookConfig {
  /** The secret set in the platform's dashboard; the webhook answers 404 while unset. */
  readonly secret: string | undefined;
  /** A signature's timestamp older than this is refused. */
  readonly maxAgeSeconds: number;
}

/** Platform-only access (src/gate/): see docs/platform-access.md. */
export interface GateConfig {
  readonly mode: GateMode;
  /** Canonical `network/bits` entries; empty means no address check. */
  readonly allowedCidrs: readonly string[];
  readonly checkUserAgent: boolean;
  readonly checkRobloxId: boolean;
  /** How many proxies of the operator's own sit in front (X-Forwarded-For entries trusted). */
  readonly trustProxyHops: number;
  /** The operator's proxies' ranges, instead of a hop count. */
  readonly trustedProxyCidrs: readonly string[];
  /** Full reload of the ban list, the bound on staleness should a ban event be lost. */
  readonly banReloadMs: number;
  /** Automatic bans per minute on all instances together; beyond, violations are refused, counted, not banned. */
  readonly banMaxPerMinute: number;
  /** Violation log lines per minute per instance; the rest are counted in one summary line. */
  readonly violationLogPerMinute: number;
}

/** Sessions of the operator console (src/console/): see docs/console.md. */
export interface ConsoleConfig {
  /** A session unused for this long ends; every request made with it starts the time again. */
  readonly sessionIdleMs: number;
  /** Wrong tokens allowed per address and window before sign-in answers 429. */
  readonly signInAttempts: number;
  readonly signInWindowMs: number;
}

export interface RedisNode {
  readonly host: string;
  readonly port: number;
}

export const DEFAULT_REDIS_URL = 'redis://127.0.0.1:6379';

export class ConfigError extends Error {
  override name = 'ConfigError';
}

type Env = Record<string, string | undefined>;

function str(env: Env, name: string, fallback: string): string {
  const raw = env[name];
  return raw === undefined || raw === '' ? fallback : raw;
}

function int(env: Env, name: string, fallback: number, min: number, max: number): number {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  if (!/^\d+$/.test(raw.trim())) {
    throw new ConfigError(`${name} must be a whole number between ${min} and ${max}, got "${raw}"`);
  }
  const n = Number(raw.trim());
  if (n < min || n > max) {
    throw new ConfigError(`${name} must be between ${min} and ${max}, got ${n}`);
  }
  return n;
}

/** A decimal number such as 0.001 or 720 (no exponent, no sign). */
function decimal(env: Env, name: string, fallback: number, min: number, max: number): number {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  if (!/^\d+(\.\d+)?$/.test(raw.trim())) {
    throw new ConfigError(`${name} must be a number between ${min} and ${max}, got "${raw}"`);
  }
  const n = Number(raw.trim());
  if (n < min || n > max) {
    throw new ConfigError(`${name} must be between ${min} and ${max}, got ${n}`);
  }
  return n;
}

function oneOf<T extends string>(env: Env, name: string, fallback: T, allowed: readonly T[]): T {
  const raw = str(env, name, fallback);
  if (!(allowed as readonly string[]).includes(raw)) {
    throw new ConfigError(`${name} must be one of ${allowed.join(', ')}, got "${raw}"`);
  }
  return raw as T;
}

function bool(env: Env, name: string, fallback: boolean): boolean {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  const value = raw.trim().toLowerCase();
  if (['1', 'true', 'on', 'yes'].includes(value)) return true;
  if (['0', 'false', 'off', 'no'].includes(value)) return false;
  throw new ConfigError(`${name} must be on or off (also true/false, 1/0, yes/no), got "${raw}"`);
}

function cidrs(env: Env, name: string): string[] {
  const parsed = parseCidrList(env[name] ?? '');
  if (!parsed.ok) {
    throw new ConfigError(
      `${name} must be a comma-separated list of IPv4/IPv6 addresses or ranges such as 128.116.0.0/17 or 2001:db8::/32, got "${parsed.bad}"`,
    );
  }
  return parsed.cidrs;
}

function gate(env: Env): GateConfig {
  const config: GateConfig = {
    mode: oneOf<GateMode>(env, 'GATE_MODE', 'off', ['off', 'report', 'enforce']),
    allowedCidrs: cidrs(env, 'GATE_ALLOWED_CIDRS'),
    checkUserAgent: bool(env, 'GATE_CHECK_USER_AGENT', true),
    checkRobloxId: bool(env, 'GATE_CHECK_ROBLOX_ID', true),
    trustProxyHops: int(env, 'TRUST_PROXY_HOPS', 0, 0, 10),
    trustedProxyCidrs: cidrs(env, 'TRUSTED_PROXY_CIDRS'),
    banReloadMs: int(env, 'GATE_BAN_RELOAD_MS', 60_000, 1000, 3_600_000),
    banMaxPerMinute: int(env, 'GATE_BAN_MAX_PER_MINUTE', 30, 0, 100_000),
    violationLogPerMinute: int(env, 'GATE_VIOLATION_LOG_PER_MINUTE', 60, 0, 100_000),
  };
  if (config.trustProxyHops > 0 && config.trustedProxyCidrs.length > 0) {
    throw new ConfigError('Set either TRUST_PROXY_HOPS or TRUSTED_PROXY_CIDRS, not both: they are two ways to say which proxies to trust');
  }
  const anyCheck = config.allowedCidrs.length > 0 || config.checkUserAgent || config.checkRobloxId;
  if (config.mode !== 'off' && !anyCheck) {
    throw new ConfigError(
      `GATE_MODE=${config.mode} with every check off (GATE_ALLOWED_CIDRS empty, GATE_CHECK_USER_AGENT and GATE_CHECK_ROBLOX_ID off) checks nothing: enable a check or set GATE_MODE=off`,
    );
  }
  return config;
}

function redisUrl(env: Env): string | undefined {
  const raw = env['REDIS_URL'];
  if (raw === undefined || raw === '') return undefined;
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new ConfigError(`REDIS_URL must be a URL such as ${DEFAULT_REDIS_URL}, got an unparsable value`);
  }
  if (url.protocol !== 'redis:' && url.protocol !== 'rediss:') {
    throw new ConfigError(`REDIS_URL must start with redis:// or rediss://, got "${url.protocol}"`);
  }
  return raw;
}

/** WORKERS: a count, or `auto` for one worker per core. */
function workers(env: Env): number {
  const raw = env['WORKERS'];
  if (raw !== undefined && raw.trim() === 'auto') return availableParallelism();
  return int(env, 'WORKERS', 1, 1, 256);
}

function clusterNodes(env: Env): RedisNode[] | undefined {
  const raw = env['REDIS_CLUSTER_NODES'];
  if (raw === undefined || raw.trim() === '') return undefined;
  return raw.split(',').map((part) => {
    const seed = part.trim();
    // host:port, or [v6-address]:port
    const match = /^(?:\[([^\]]+)\]|([^:\s]+)):(\d{1,5})$/.exec(seed);
    const port = match ? Number(match[3]) : NaN;
    if (!match || port < 1 || port > 65535) {
      throw new ConfigError(`REDIS_CLUSTER_NODES must be comma-separated host:port seeds, got "${seed}"`);
    }
    return { host: (match[1] ?? match[2])!, port };
  });
}

/** The least an erasure or webhook secret must be: a short one could be guessed from its digests. */
export const ERASURE_SECRET_MIN = 16;

function secret(env: Env, name: string): string | undefined {
  const raw = env[name];
  if (raw === undefined || raw === '') return undefined;
  if (raw.length < ERASURE_SECRET_MIN) {
    throw new ConfigError(`${name} must be at least ${ERASURE_SECRET_MIN} characters long (make one with: openssl rand -hex 32)`);
  }
  return raw;
}

function erasure(env: Env): ErasureConfig {
  return {
    digestSecret: secret(env, 'ERASURE_DIGEST_SECRET'),
    tombstoneMs: int(env, 'ERASURE_TOMBSTONE_DAYS', 90, 1, 3650) * 86_400_000,
    claimIdleMs: int(env, 'ERASURE_CLAIM_IDLE_MS', 60_000, 500, 3_600_000),
    aofRewriteMs: int(env, 'ERASURE_AOF_REWRITE_HOURS', 0, 0, 8784) * 3_600_000,
  };
}

function robloxWebhook(env: Env, erasureConfig: ErasureConfig): RobloxWebhookConfig {
  const config = {
    secret: secret(env, 'ROBLOX_WEBHOOK_SECRET'),
    maxAgeSeconds: int(env, 'ROBLOX_WEBHOOK_MAX_AGE_SECONDS', 600, 10, 86_400),
  };
  if (config.secret !== undefined && erasureConfig.digestSecret === undefined) {
    throw new ConfigError(
      'ROBLOX_WEBHOOK_SECRET is set but ERASURE_DIGEST_SECRET is not: the webhook records erasures, which need ERASURE_DIGEST_SECRET ' +
        '(the same on every instance and for the CLI; make one with: openssl rand -hex 32)',
    );
  }
  return config;
}

function adminToken(env: Env): string | undefined {
  const raw = env['ADMIN_TOKEN'];
  if (raw === undefined || raw === '') return undefined;
  if (raw.length < 16) throw new ConfigError('ADMIN_TOKEN must be at least 16 characters long');
  return raw;
}

/** The least an admin token must be when the admin API listens beyond the host itself. */
export const EXPOSED_ADMIN_TOKEN_MIN = 32;

function isLoopbackHost(host: string): boolean {
  if (host === 'localhost') return true;
  const ip = parseIp(host.replace(/^\[(.*)\]$/, '$1'));
  return ip !== undefined && ip.range() === 'loopback';
}

/**
 * On a non-loopback ADMIN_HOST the admin API can be reached from the network, and its token is
 * all that guards every workspace: refuse to start with a token that could be guessed.
 */
function checkAdminExposure(admin: Config['admin']): void {
  if (admin.token === undefined || isLoopbackHost(admin.host)) return;
  if (admin.token.length < EXPOSED_ADMIN_TOKEN_MIN || /^(.)\1*$/su.test(admin.token)) {
    throw new ConfigError(
      `ADMIN_HOST=${admin.host} is not a loopback address, so the admin API is reachable from the network: ADMIN_TOKEN must then be ` +
        `at least ${EXPOSED_ADMIN_TOKEN_MIN} characters and not one character repeated (make one with: openssl rand -hex 32)`,
    );
  }
}

export function loadConfig(env: Env = process.env): Config {
  const erasureConfig = erasure(env);
  const config: Config = {
    port: int(env, 'PORT', 8080, 0, 65535),
    host: str(env, 'HOST', '0.0.0.0'),
    redisUrl: redisUrl(env),
    redisClusterNodes: clusterNodes(env),
    redisAppendfsync: oneOf(env, 'REDIS_APPENDFSYNC', 'everysec', ['always', 'everysec', 'no'] as const),
    logLevel: oneOf<LogLevel>(env, 'LOG_LEVEL', 'info', [
      'fatal',
      'error',
      'warn',
      'info',
      'debug',
      'trace',
      'silent',
    ]),
    nodeEnv: str(env, 'NODE_ENV', 'development'),
    limits: {
      maxBodyBytes: int(env, 'MAX_BODY_BYTES', 1024 * 1024, 1024, 64 * 1024 * 1024),
      maxValueDepth: int(env, 'MAX_VALUE_DEPTH', 32, 1, 1000),
      maxKeysPerPlayer: int(env, 'MAX_KEYS_PER_PLAYER', 1000, 1, 1_000_000),
      maxPlayerBytes: int(env, 'MAX_PLAYER_BYTES', 4 * 1024 * 1024, 1024, 512 * 1024 * 1024),
      workspaceBytesPerSecond: int(env, 'WORKSPACE_BYTES_PER_SECOND', 8 * 1024 * 1024, 0, 1024 * 1024 * 1024),
    },
    history: {
      intervalMs: int(env, 'HISTORY_INTERVAL_SECONDS', 300, 0, 86_400) * 1000,
      maxVersions: int(env, 'HISTORY_MAX_VERSIONS', 1000, 0, 100_000),
      fineMs: int(env, 'HISTORY_FINE_HOURS', 24, 0, 24 * 366) * 3_600_000,
      hourlyMs: int(env, 'HISTORY_HOURLY_HOURS', 168, 0, 24 * 366) * 3_600_000,
      maxAgeMs: Math.round(decimal(env, 'HISTORY_MAX_AGE_HOURS', 30 * 24, 0.001, 24 * 366) * 3_600_000),
      maxBytes: int(env, 'HISTORY_MAX_BYTES', 256 * 1024, 0, 512 * 1024 * 1024),
      quotaShare: decimal(env, 'HISTORY_QUOTA_SHARE', 1, 0, 100),
      sweepMs: int(env, 'HISTORY_SWEEP_SECONDS', 30, 1, 3600) * 1000,
    },
    sessions: {
      defaultTtlSeconds: int(env, 'SESSION_DEFAULT_TTL_SECONDS', 300, 30, 3600),
    },
    messages: {
      maxBytes: int(env, 'MESSAGE_MAX_BYTES', 16 * 1024, 64, 1024 * 1024),
      maxWaiting: int(env, 'MESSAGES_MAX_WAITING', 100, 1, 10_000),
      defaultTtlSeconds: int(env, 'MESSAGE_TTL_SECONDS', 30 * 86_400, 60, 366 * 86_400),
      maxTtlSeconds: int(env, 'MESSAGE_MAX_TTL_SECONDS', 90 * 86_400, 60, 366 * 86_400),
    },
    idempotencyTtlSeconds: int(env, 'IDEMPOTENCY_TTL_SECONDS', 86_400, 60, 7 * 86_400),
    idempotencyTtlOverQuotaSeconds: int(env, 'IDEMPOTENCY_TTL_OVER_QUOTA_SECONDS', 600, 60, 7 * 86_400),
    idempotencyClaimFailoverMs: int(env, 'IDEMPOTENCY_CLAIM_FAILOVER_MS', 8000, 0, 60_000),
    storage: {
      quotaBytes: {
        free: int(env, 'STORAGE_QUOTA_FREE_BYTES', 256 * 1024 * 1024, 0, 2 ** 50),
        pro: int(env, 'STORAGE_QUOTA_PRO_BYTES', 16 * 1024 * 1024 * 1024, 0, 2 ** 50),
      },
      flushMs: int(env, 'STORAGE_FLUSH_MS', 5000, 50, 60_000),
      refreshMs: int(env, 'STORAGE_REFRESH_MS', 5000, 50, 600_000),
    },
    leaderboards: {
      maxBoards: int(env, 'LEADERBOARD_MAX_BOARDS', 1000, 1, 1_000_000),
      maxEntries: int(env, 'LEADERBOARD_MAX_ENTRIES', 10_000_000, 1, 1_000_000_000),
    },
    rateLimit: {
      windowMs: int(env, 'RATE_LIMIT_WINDOW_MS', 10_000, 100, 3_600_000),
      plans: {
        free: int(env, 'RATE_LIMIT_FREE', 60, 1, 1_000_000_000),
        pro: int(env, 'RATE_LIMIT_PRO', 300, 1, 1_000_000_000),
      },
      leaseAhead: int(env, 'RATE_LIMIT_LEASE_AHEAD', 32, 0, 1_000_000),
      failoverMs: int(env, 'RATE_LIMIT_FAILOVER_MS', 30_000, 0, 600_000),
      usageFlushMs: int(env, 'USAGE_FLUSH_MS', 5000, 100, 600_000),
    },
    redis: {
      commandTimeoutMs: int(env, 'REDIS_COMMAND_TIMEOUT_MS', 1000, 50, 60_000),
      connectTimeoutMs: int(env, 'REDIS_CONNECT_TIMEOUT_MS', 1000, 50, 60_000),
      autoPipelining: oneOf(env, 'REDIS_AUTO_PIPELINING', 'true', ['true', 'false']) === 'true',
    },
    keyCache: {
      ttlMs: int(env, 'KEY_CACHE_TTL_MS', 30_000, 0, 3_600_000),
      maxEntries: int(env, 'KEY_CACHE_MAX', 100_000, 1, 10_000_000),
      maxUnknownEntries: int(env, 'KEY_CACHE_UNKNOWN_MAX', 10_000, 1, 10_000_000),
    },
    authFailuresPerMinute: int(env, 'AUTH_FAILURES_PER_MINUTE', 30, 1, 1_000_000),
    keyLastUsedFlushMs: int(env, 'KEY_LAST_USED_FLUSH_MS', 5000, 100, 600_000),
    playerIndexFlushMs: int(env, 'PLAYER_INDEX_FLUSH_MS', 5000, 100, 600_000),
    statsFlushMs: int(env, 'STATS_FLUSH_MS', 10_000, 100, 60_000),
    auditMaxEntries: int(env, 'AUDIT_MAX_ENTRIES', 10_000, 10, 10_000_000),
    admin: {
      token: adminToken(env),
      port: int(env, 'ADMIN_PORT', 8081, 0, 65535),
      host: str(env, 'ADMIN_HOST', '127.0.0.1'),
      authFailures: int(env, 'ADMIN_AUTH_FAILURES', 20, 1, 1_000_000),
      authWindowMs: int(env, 'ADMIN_AUTH_WINDOW_SECONDS', 300, 1, 86_400) * 1000,
    },
    http: {
      headersTimeoutMs: int(env, 'HTTP_HEADERS_TIMEOUT_MS', 10_000, 100, 600_000),
      requestTimeoutMs: int(env, 'HTTP_REQUEST_TIMEOUT_MS', 30_000, 100, 3_600_000),
    },
    shutdownGraceMs: int(env, 'SHUTDOWN_GRACE_MS', 10_000, 0, 600_000),
    shutdownDrainMs: int(env, 'SHUTDOWN_DRAIN_MS', 0, 0, 600_000),
    gate: gate(env),
    console: {
      sessionIdleMs: int(env, 'CONSOLE_SESSION_IDLE_SECONDS', 1800, 1, 604_800) * 1000,
      signInAttempts: int(env, 'CONSOLE_SIGNIN_ATTEMPTS', 5, 1, 1000),
      signInWindowMs: int(env, 'CONSOLE_SIGNIN_WINDOW_SECONDS', 300, 1, 86_400) * 1000,
    },
    workers: workers(env),
    erasure: erasureConfig,
    robloxWebhook: robloxWebhook(env, erasureConfig),
  };
  checkAdminExposure(config.admin);
  if (config.http.headersTimeoutMs > config.http.requestTimeoutMs) {
    throw new ConfigError('HTTP_HEADERS_TIMEOUT_MS must not be greater than HTTP_REQUEST_TIMEOUT_MS');
  }
  return deepFreeze(config);
}

function deepFreeze<T>(value: T): T {
  if (value && typeof value === 'object') {
    for (const v of Object.values(value)) deepFreeze(v);
    Object.freeze(value);
  }
  return value;
}
