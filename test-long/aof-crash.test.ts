// Crash test: under a concurrent write load through the service, kill -9 Redis, restart it from
// its AOF (same folder and port), and check every write the service acknowledged.
// appendfsync always must lose none; everysec and no are measured and reported.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect } from 'chai';
import { Redis } from 'ioredis';
import { AdminOperations } from '../src/admin/operations.js';
import { loadConfig } from '../src/config.js';
import { startLocalRedis } from '../src/dev/local-redis.js';
import { createLogger } from '../src/logger.js';
import { startService } from '../src/server.js';
import { startWriteLoad, verifyWrites } from '../test/support/write-load.js';
import { report } from './report.js';

const MODES = ['always', 'everysec', 'no'] as const;

describe('kill -9 of Redis under write load, restart from the AOF', function () {
  this.timeout(120_000);

  for (const appendfsync of MODES) {
    it(`appendfsync ${appendfsync}: ${appendfsync === 'always' ? 'no acknowledged write is missing' : 'reports what is missing'}`, async () => {
      const dataDir = mkdtempSync(join(tmpdir(), `pds-crash-${appendfsync}-`));
      let redis = await startLocalRedis({ dataDir, appendfsync });
      const config = loadConfig({ REDIS_URL: redis.url, PORT: '0', HOST: '127.0.0.1', ADMIN_PORT: '0', LOG_LEVEL: 'silent', RATE_LIMIT_PRO: '1000000000' });
      const service = await startService(config, createLogger(config));
      let admin = new Redis(redis.url);
      try {
        const ws = await new AdminOperations(admin).createWorkspace({ name: `crash-${appendfsync}`, plan: 'pro' });
        admin.disconnect();
        const users = Array.from({ length: 50 }, (_, i) => `u${i}`);
        const load = startWriteLoad({ baseUrl: service.baseUrl, apiKey: ws.apiKey, users, workers: 32 });
        await new Promise((r) => setTimeout(r, 3000));
        const killedAt = Date.now();
        await redis.kill();
        await new Promise((r) => setTimeout(r, 300));
        const result = await load.stop();

        redis = await startLocalRedis({ dataDir, port: redis.port, appendfsync });
        admin = new Redis(redis.url);
        const verification = await verifyWrites(admin, ws.workspaceId, result);
        const lastAck = Math.max(...result.outcomes.filter((o) => o.ok).map((o) => o.at));
        const missingAt = verification.missingSets.map((m) => m.at);
        report(`aof-crash-${appendfsync}`, {
          acknowledgedWrites: verification.acknowledged,
          acknowledgedAfterKill: result.outcomes.filter((o) => o.ok && o.at > killedAt).length,
          missingSets: verification.missingSets.length,
          missingIncrements: verification.missingIncrements,
          missingSpanMs: missingAt.length ? Math.max(...missingAt) - Math.min(...missingAt) : 0,
          missingBeforeKillMs: missingAt.length ? killedAt - Math.min(...missingAt) : 0,
          lastAckBeforeKillMs: killedAt - lastAck,
          overcountedCounters: verification.overcounted,
        });
        expect(verification.overcounted).to.equal(0);
        if (appendfsync === 'always') {
          expect(verification.missingSets).to.deep.equal([]);
          expect(verification.missingIncrements).to.equal(0);
        }
      } finally {
        admin.disconnect();
        await service.close();
        await redis.stop();
        rmSync(dataDir, { recursive: true, force: true });
      }
    });
  }
});
