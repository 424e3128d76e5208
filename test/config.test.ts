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
