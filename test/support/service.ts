// Starts the real service on an ephemeral port against the test Redis, and gives tests fresh
// workspaces and a small HTTP helper. Every test isolates itself by its own random workspace.
import { Redis } from 'ioredis';
import { AdminOperations, type CreatedWorkspace } from '../../src/admin/operations.js';
import { loadConfig, type Config } from '../../src/config.js';
import { createLogger } from '../../src/logger.js';
import { startService, type RunningService, type ServiceOptions } from '../../src/server.js';
import { defineScripts } from '../../src/store/redis/scripts.js';
import { testRedisUrl } from './hooks.js';
import { recordResponse } from './response-recorder.js';

/**
 * Every test calls from 127.0.0.1, one address for what would be many callers, so the budget
 * of failed keys per address (AUTH_FAILURES_PER_MINUTE) is set out of reach unless a test sets
 * it: test/security/abuse-findings.test.ts tests it.
 */
export const TEST_AUTH_FAILURES_PER_MINUTE = '1000000';
/** The same for wrong admin tokens (ADMIN_AUTH_FAILURES), counted in the shared test Redis: test/admin/admin-auth-limit.test.ts tests it. */
export const TEST_ADMIN_AUTH_FAILURES = '1000000';
/**
 * Automatic bans a minute: the gate tests ban many addresses of the same two documentation
 * /24s, and a network takes at most a quarter of the minute's bans, counted in the shared test
 * Redis: out of reach unless a test sets it (test/http/gate-abuse.test.ts tests it).
 */
export const TEST_GATE_BAN_MAX_PER_MINUTE = '100000';

export function testConfig(env: Record<string, string> = {}): Config {
  return loadConfig({
    REDIS_URL: testRedisUrl(),
    PORT: '0',
    HOST: '127.0.0.1',
    ADMIN_PORT: '0',
    LOG_LEVEL: 'silent',
    AUTH_FAILURES_PER_MINUTE: TEST_AUTH_FAILURES_PER_MINUTE,
    ADMIN_AUTH_FAILURES: TEST_ADMIN_AUTH_FAILURES,
    GATE_BAN_MAX_PER_MINUTE: TEST_GATE_BAN_MAX_PER_MINUTE,
    ...env,
  });
}

export async function startTestService(env: Record<string, string> = {}, options: ServiceOptions = {}): Promise<RunningService> {
  const config = testConfig(env);
  return startService(config, createLogger(config), options);
}

/** A clock a test moves by hand (ServiceOptions.clock): starts at `startMs`. */
export function testClock(startMs = Date.now()): { now: () => number; advance(ms: number): void; set(ms: number): void } {
  let at = startMs;
  return {
    now: () => at,
    advance: (ms) => void (at += ms),
    set: (ms) => void (at = ms),
  };
}

/** A plain Redis connection for tests to inspect or prepare state directly. */
export function testRedis(url = testRedisUrl()): Redis {
  const redis = new Redis(url);
  defineScripts(redis);
  return redis;
}

export async function newWorkspace(redis: Redis, plan: 'free' | 'pro' = 'pro', name = 'test'): Promise<CreatedWorkspace> {
  return new AdminOperations(redis).createWorkspace({ name, plan });
}

export interface ApiResponse {
  status: number;
  headers: Headers;
  body: any;
  text: string;
}

export interface RequestOptions {
  key?: string | undefined;
  body?: unknown;
  /** Sent as is, instead of JSON-encoding `body`. */
  rawBody?: string | Uint8Array;
  headers?: Record<string, string>;
}

/**
 * Calls the service; `path` is relative to the base URL (/api/v1). Every response is recorded
 * and checked against the OpenAPI document at the end of the run (hooks.ts).
 */
export async function call(
  service: Pick<RunningService, 'baseUrl'>,
  method: string,
  path: string,
  options: RequestOptions = {},
): Promise<ApiResponse> {
  const headers: Record<string, string> = { ...options.headers };
  if (options.key !== undefined) headers['x-api-key'] = options.key;
  let body: string | Uint8Array | undefined;
  if (options.rawBody !== undefined) body = options.rawBody;
  else if (options.body !== undefined) {
    body = JSON.stringify(options.body);
    headers['content-type'] ??= 'application/json';
  }
  return fetchRecorded(service.baseUrl + path, method, headers, body);
}

/**
 * Sends one request and parses its JSON answer. Every answer is recorded, to be checked
 * against the OpenAPI document at the end of the run.
 */
export async function fetchRecorded(
  url: string,
  method: string,
  headers: Record<string, string>,
  body: string | Uint8Array | undefined,
): Promise<ApiResponse> {
  const res = await fetch(url, { method, headers, body: body as BodyInit | undefined });
  const text = await res.text();
  recordResponse(url, method, res, text);
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    parsed = undefined;
  }
  return { status: res.status, headers: res.headers, body: parsed, text };
}

/** A client bound to one service and key, for brevity in tests. */
export function client(service: Pick<RunningService, 'baseUrl'>, key: string) {
  return {
    get: (path: string, o: RequestOptions = {}) => call(service, 'GET', path, { key, ...o }),
    post: (path: string, body: unknown, o: RequestOptions = {}) => call(service, 'POST', path, { key, body, ...o }),
  };
}

/**
 * Registers mocha hooks that start a service (with optional env overrides) and a plain Redis
 * connection for the enclosing describe block, and stop them afterwards.
 */
export function useService(env: Record<string, string> = {}, options: ServiceOptions = {}): { service: RunningService; redis: Redis } {
  const handles = {} as { service: RunningService; redis: Redis };
  before(async () => {
    handles.service = await startTestService(env, options);
    handles.redis = testRedis();
  });
  after(async () => {
    await handles.service?.close();
    handles.redis?.disconnect();
  });
  return handles;
}
