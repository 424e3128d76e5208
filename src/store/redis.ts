// Creates the Redis client the service uses: a single server or a cluster, with bounded
// command timeouts and no offline queue, so a Redis that is down or slow turns into a quick
// 503 rather than requests piling up in memory. Reconnection is automatic and endless.
import { Cluster, Redis, type RedisOptions } from 'ioredis';
import { DEFAULT_REDIS_URL } from '../config.js';
import { defineScripts } from './scripts.js';

export type RedisClient = Redis | Cluster;

export interface RedisSettings {
  readonly url?: string | undefined;
  readonly clusterNodes?: readonly { host: string; port: number }[] | undefined;
  readonly commandTimeoutMs: number;
  readonly connectTimeoutMs: number;
  /** Pipelines commands issued in the same tick into one write. */
  readonly autoPipelining?: boolean;
}

function baseOptions(settings: RedisSettings): RedisOptions {
  return {
    commandTimeout: settings.commandTimeoutMs,
    connectTimeout: settings.connectTimeoutMs,
    enableOfflineQueue: false,
    maxRetriesPerRequest: 0,
    // Reconnect for ever, backing off to at most one attempt every 500 ms.
    retryStrategy: (attempt) => Math.min(50 * attempt, 500),
    lazyConnect: true,
  };
}

export function createRedis(settings: RedisSettings): RedisClient {
  const options = baseOptions(settings);
  let client: RedisClient;
  if (settings.clusterNodes && settings.clusterNodes.length > 0) {
    client = new Cluster([...settings.clusterNodes], {
      enableOfflineQueue: false,
      enableAutoPipelining: settings.autoPipelining ?? true,
      lazyConnect: true,
      clusterRetryStrategy: (attempt) => Math.min(100 * attempt, 1000),
      redisOptions: options,
    });
  } else {
    client = new Redis(settings.url ?? DEFAULT_REDIS_URL, {
      ...options,
      enableAutoPipelining: settings.autoPipelining ?? true,
    });
  }
  defineScripts(client);
  return client;
}

/** Connects, and rejects with a clear message when Redis does not answer in time. */
export async function connectRedis(client: RedisClient, timeoutMs: number): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`Redis did not answer within ${timeoutMs} ms`)), timeoutMs);
  });
  try {
    await Promise.race([client.connect(), timeout]);
    await Promise.race([client.ping(), timeout]);
  } catch (err) {
    client.disconnect();
    throw err;
  } finally {
    clearTimeout(timer);
  }
}

const UNAVAILABLE_REPLY = /^(LOADING|CLUSTERDOWN|TRYAGAIN|MASTERDOWN|READONLY|BUSY|NOREPLICAS)\b/;

/**
 * Whether an error from ioredis means "Redis cannot serve right now" (503, worth a retry)
 * rather than a bug (500): connection loss, timeouts, a loading, busy or failing-over node.
 */
export function isUnavailableError(err: unknown): boolean {
  if (!(err instanceof Error)) return false;
  if (err.name === 'ReplyError') return UNAVAILABLE_REPLY.test(err.message);
  return (
    err.name === 'MaxRetriesPerRequestError' ||
    /Command timed out|Stream isn't writeable|Connection is closed|ECONNREFUSED|ECONNRESET|ETIMEDOUT|EPIPE|Failed to refresh slots cache|None of startup nodes is available|Cluster isn't ready|enableOfflineQueue/i.test(
      err.message,
    )
  );
}
