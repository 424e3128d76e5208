import { expect } from 'chai';
import { ConfigError, loadConfig } from '../src/config.js';

describe('config', () => {
  it('has documented defaults', () => {
    const c = loadConfig({});
    expect(c.port).to.equal(8080);
    expect(c.host).to.equal('0.0.0.0');
    expect(c.redisUrl).to.equal(undefined);
    expect(c.logLevel).to.equal('info');
    expect(c.limits).to.deep.equal({
      maxBodyBytes: 1048576,
      maxValueDepth: 32,
      maxKeysPerPlayer: 1000,
      maxPlayerBytes: 4194304,
      workspaceBytesPerSecond: 8388608,
    });
    expect(c.rateLimit).to.deep.equal({ windowMs: 10000, plans: { free: 60, pro: 300 }, leaseAhead: 32, usageFlushMs: 5000, failoverMs: 30000 });
    expect(c.idempotencyClaimFailoverMs).to.equal(8000);
    expect(c.admin).to.deep.equal({ token: undefined, port: 8081, host: '127.0.0.1', authFailures: 20, authWindowMs: 300_000 });
  });

  it('reads every variable', () => {
    const c = loadConfig({
      PORT: '9000',
      HOST: '127.0.0.1',
      REDIS_URL: 'redis://redis:6379/2',
      LOG_LEVEL: 'warn',
      MAX_BODY_BYTES: '2048',
      MAX_VALUE_DEPTH: '4',
      MAX_KEYS_PER_PLAYER: '10',
      WORKSPACE_BYTES_PER_SECOND: '1048576',
      RATE_LIMIT_WINDOW_MS: '1000',
      RATE_LIMIT_FREE: '5',
      RATE_LIMIT_PRO: '50',
      RATE_LIMIT_LEASE_AHEAD: '0',
      RATE_LIMIT_FAILOVER_MS: '5000',
      IDEMPOTENCY_CLAIM_FAILOVER_MS: '3000',
      USAGE_FLUSH_MS: '250',
      ADMIN_TOKEN: 'a-very-long-admin-token',
      ADMIN_PORT: '9001',
      ADMIN_AUTH_FAILURES: '3',
      ADMIN_AUTH_WINDOW_SECONDS: '60',
    });
    expect(c.port).to.equal(9000);
    expect(c.redisUrl).to.equal('redis://redis:6379/2');
    expect(c.logLevel).to.equal('warn');
    expect(c.limits).to.deep.equal({
      maxBodyBytes: 2048,
      maxValueDepth: 4,
      maxKeysPerPlayer: 10,
      maxPlayerBytes: 4194304,
      workspaceBytesPerSecond: 1048576,
    });
    expect(c.rateLimit).to.deep.equal({ windowMs: 1000, plans: { free: 5, pro: 50 }, leaseAhead: 0, usageFlushMs: 250, failoverMs: 5000 });
    expect(c.idempotencyClaimFailoverMs).to.equal(3000);
    expect(c.admin.token).to.equal('a-very-long-admin-token');
    expect(c.admin.port).to.equal(9001);
    expect([c.admin.authFailures, c.admin.authWindowMs]).to.deep.equal([3, 60_000]);
  });

  it('reads the history settings: a point per interval, every one for a day, one an hour for a week, one a day to 30 days', () => {
    expect(loadConfig({}).history).to.deep.equal({
      intervalMs: 300_000,
      maxVersions: 1000,
      fineMs: 24 * 3_600_000,
      hourlyMs: 168 * 3_600_000,
      maxAgeMs: 720 * 3_600_000,
      maxBytes: 262_144,
      quotaShare: 1,
      sweepMs: 30_000,
    });
    const c = loadConfig({
      HISTORY_INTERVAL_SECONDS: '60',
      HISTORY_MAX_VERSIONS: '50',
      HISTORY_FINE_HOURS: '2',
      HISTORY_HOURLY_HOURS: '48',
      HISTORY_MAX_AGE_HOURS: '0.5',
      HISTORY_MAX_BYTES: '1024',
      HISTORY_QUOTA_SHARE: '0.25',
      HISTORY_SWEEP_SECONDS: '5',
    });
    expect(c.history).to.deep.equal({
      intervalMs: 60_000,
      maxVersions: 50,
      fineMs: 2 * 3_600_000,
      hourlyMs: 48 * 3_600_000,
      maxAgeMs: 1_800_000,
      maxBytes: 1024,
      quotaShare: 0.25,
      sweepMs: 5000,
    });
    expect(() => loadConfig({ HISTORY_HOURLY_HOURS: '9000' })).to.throw(ConfigError, /^HISTORY_HOURLY_HOURS must be between 0 and 8784/);
    expect(() => loadConfig({ HISTORY_HOURLY_HOURS: '1.5' })).to.throw(ConfigError, /^HISTORY_HOURLY_HOURS must be a whole number/);
  });

  it('is frozen', () => {
    const c = loadConfig({});
    expect(Object.isFrozen(c)).to.equal(true);
    expect(Object.isFrozen(c.rateLimit.plans)).to.equal(true);
  });

  it('fails fast with a message naming the variable', () => {
    const cases: Array<[Record<string, string>, RegExp]> = [
      [{ PORT: 'eighty' }, /^PORT must be a whole number/],
      [{ PORT: '70000' }, /^PORT must be between 0 and 65535/],
      [{ REDIS_URL: 'http://x' }, /^REDIS_URL must start with redis:\/\//],
      [{ REDIS_URL: 'not a url' }, /^REDIS_URL must be a URL/],
      [{ LOG_LEVEL: 'loud' }, /^LOG_LEVEL must be one of/],
      [{ MAX_BODY_BYTES: '-1' }, /^MAX_BODY_BYTES/],
      [{ RATE_LIMIT_FREE: '0' }, /^RATE_LIMIT_FREE must be between/],
      [{ RATE_LIMIT_LEASE_AHEAD: '2000000' }, /^RATE_LIMIT_LEASE_AHEAD must be between/],
      [{ ADMIN_TOKEN: 'short' }, /^ADMIN_TOKEN must be at least 16/],
    ];
    for (const [env, message] of cases) {
      expect(() => loadConfig(env), JSON.stringify(env)).to.throw(ConfigError, message);
    }
  });
});
