// Ad-hoc measure of what the gate costs per request: the synchronous decision in process, and
// sequential /ping against two services (gate off, gate enforce) side by side on one Redis.
// Run: npx tsx bench/gate-overhead.ts  (starts its own redis-server on a free port)
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startLocalRedis } from '../src/dev/local-redis.js';
import { loadConfig } from '../src/config.js';
import { createLogger } from '../src/logger.js';
import { startService } from '../src/server.js';
import { AdminOperations } from '../src/admin/operations.js';
import { CidrList } from '../src/domain/address.js';
import { resolveClientAddress } from '../src/gate/client-address.js';
import { failedChecks } from '../src/gate/checks.js';

// Micro: the synchronous decision per request.
const allowed = CidrList.of(['128.116.0.0/17', '2001:db8::/32', '209.206.40.0/21']);
const banned = new Set(Array.from({ length: 10000 }, (_, i) => `198.51.${i >> 8}.${i & 255}`));
const N = 200_000;
let t = process.hrtime.bigint();
let sink = 0;
for (let i = 0; i < N; i++) {
  const a = resolveClientAddress('10.0.0.2', `6.6.6.6, 128.116.${i & 127}.${i & 255}`, { kind: 'hops', hops: 1 });
  if (a.known && banned.has(a.text)) sink++;
  sink += failedChecks({ userAgent: 'Roblox/Linux', robloxId: '1', address: a }, { checkUserAgent: true, checkRobloxId: true }, allowed).length;
}
const ns = Number(process.hrtime.bigint() - t) / N;
console.log(`decision: ${ns.toFixed(0)} ns/request (${N} iterations, sink ${sink})`);

// Side by side: sequential /ping, gate off vs enforce, interleaved blocks.
const redis = await startLocalRedis({ dataDir: mkdtempSync(join(tmpdir(), 'gate-bench-')) });
const base = { REDIS_URL: redis.url, PORT: '0', HOST: '127.0.0.1', ADMIN_PORT: '0', LOG_LEVEL: 'silent', RATE_LIMIT_PRO: '1000000' };
const off = await startService(loadConfig(base), createLogger(loadConfig(base)));
const onCfg = loadConfig({ ...base, GATE_MODE: 'enforce', TRUST_PROXY_HOPS: '1', GATE_ALLOWED_CIDRS: '128.116.0.0/17' });
const on = await startService(onCfg, createLogger(onCfg));
const ws = await new AdminOperations(off.redis).createWorkspace({ name: 'bench', plan: 'pro' });
const headers = { 'x-api-key': ws.apiKey, 'user-agent': 'Roblox/Linux', 'roblox-id': '1', 'x-forwarded-for': '128.116.1.1' };
const totals = { off: 0, on: 0 };
for (let round = 0; round < 20; round++) {
  // Alternate which goes first, so warm-up and neighbours' load do not favour one side.
  const order = round % 2 === 0 ? ([['off', off], ['on', on]] as const) : ([['on', on], ['off', off]] as const);
  for (const [name, svc] of order) {
    const t0 = performance.now();
    for (let i = 0; i < 100; i++) {
      const r = await fetch(svc.baseUrl + '/ping', { headers });
      await r.text();
    }
    totals[name] += performance.now() - t0;
  }
}
console.log(`/ping x2000 each, sequential: off ${totals.off.toFixed(0)} ms, enforce ${totals.on.toFixed(0)} ms, ratio ${(totals.on / totals.off).toFixed(2)}`);
await off.close(); await on.close(); await redis.stop();
