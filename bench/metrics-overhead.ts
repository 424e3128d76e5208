// Per-request and per-command cost of the metrics, side by side with the alternatives, in one
// process: `npx tsx bench/metrics-overhead.ts`. Absolute figures on a shared machine are noisy;
// compare the rows of one run.
import { performance } from 'node:perf_hooks';
import { Counter, Histogram, Registry } from 'prom-client';
import { ServiceMetrics } from '../src/metrics.js';
import { instrumentRedis } from '../src/store/redis/instrument.js';
import type { RedisClient } from '../src/store/redis/redis.js';

const N = 300_000;
const ROUNDS = 3;
const metrics = new ServiceMetrics();
const registry = new Registry();
const promCounter = new Counter({ name: 'c', help: 'c', labelNames: ['method', 'route', 'status'], registers: [registry] });
const promHistogram = new Histogram({ name: 'h', help: 'h', labelNames: ['method', 'route'], registers: [registry] });
const routes = ['/api/v1/data', '/api/v1/ping', '/api/v1/data/set'];
let i = 0;

function time(fn: () => void): number {
  for (let k = 0; k < 20_000; k++) fn();
  const started = performance.now();
  for (let k = 0; k < N; k++) fn();
  return ((performance.now() - started) * 1e6) / N;
}

async function timeAsync(fn: () => Promise<unknown>): Promise<number> {
  for (let k = 0; k < 20_000; k++) await fn();
  const started = performance.now();
  for (let k = 0; k < N; k++) await fn();
  return ((performance.now() - started) * 1e6) / N;
}

const resolved = Promise.resolve('OK');
const plain = { sendCommand: (_command: { name: string }) => resolved };
const timed = { sendCommand: (_command: { name: string }) => resolved };
instrumentRedis(timed as unknown as RedisClient, metrics);

for (let round = 1; round <= ROUNDS; round++) {
  const rows: Record<string, string> = {
    'request: hot counter + histogram': time(() => metrics.observeRequest('GET', routes[i++ % 3]!, 200, 0.0012)).toFixed(0),
    'request: prom-client counter + histogram': time(() => {
      const route = routes[i++ % 3]!;
      promCounter.inc({ method: 'GET', route, status: '200' });
      promHistogram.observe({ method: 'GET', route }, 0.0012);
    }).toFixed(0),
    'command: sendCommand, plain': (await timeAsync(() => plain.sendCommand({ name: 'evalsha' }))).toFixed(0),
    'command: sendCommand, instrumented': (await timeAsync(() => timed.sendCommand({ name: 'evalsha' }))).toFixed(0),
  };
  process.stdout.write(`round ${round} (ns per call)\n`);
  for (const [name, ns] of Object.entries(rows)) process.stdout.write(`  ${name.padEnd(44)} ${ns.padStart(6)}\n`);
}
