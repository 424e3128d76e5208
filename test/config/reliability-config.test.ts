import { expect } from 'chai';
import { ConfigError, loadConfig } from '../../src/config.js';

describe('config: cluster seeds, append fsync and HTTP timeouts', () => {
  it('reads REDIS_CLUSTER_NODES as host:port seeds, IPv6 in brackets', () => {
    const config = loadConfig({ REDIS_CLUSTER_NODES: ' 10.0.0.1:7000, redis-b:7001,[::1]:7002 ' });
    expect(config.redisClusterNodes).to.deep.equal([
      { host: '10.0.0.1', port: 7000 },
      { host: 'redis-b', port: 7001 },
      { host: '::1', port: 7002 },
    ]);
    expect(loadConfig({}).redisClusterNodes).to.equal(undefined);
  });

  it('refuses a malformed seed, naming the variable and the seed', () => {
    for (const bad of ['redis-a', 'redis-a:', ':7000', 'redis-a:70000', 'redis-a:0', 'a:1,,b:2', 'redis://a:1']) {
      expect(() => loadConfig({ REDIS_CLUSTER_NODES: bad }), bad).to.throw(ConfigError, /^REDIS_CLUSTER_NODES must be comma-separated host:port seeds/);
    }
  });

  it('takes REDIS_APPENDFSYNC always, everysec or no', () => {
    expect(loadConfig({}).redisAppendfsync).to.equal('everysec');
    expect(loadConfig({ REDIS_APPENDFSYNC: 'always' }).redisAppendfsync).to.equal('always');
    expect(() => loadConfig({ REDIS_APPENDFSYNC: 'sometimes' })).to.throw(ConfigError, /REDIS_APPENDFSYNC must be one of always, everysec, no/);
  });

  it('bounds the HTTP timeouts, headers no longer than the whole request', () => {
    const config = loadConfig({ HTTP_HEADERS_TIMEOUT_MS: '2000', HTTP_REQUEST_TIMEOUT_MS: '5000' });
    expect(config.http).to.deep.equal({ headersTimeoutMs: 2000, requestTimeoutMs: 5000 });
    expect(loadConfig({}).http).to.deep.equal({ headersTimeoutMs: 10_000, requestTimeoutMs: 30_000 });
    expect(() => loadConfig({ HTTP_HEADERS_TIMEOUT_MS: '40000' })).to.throw(ConfigError, /HTTP_HEADERS_TIMEOUT_MS must not be greater than HTTP_REQUEST_TIMEOUT_MS/);
    expect(() => loadConfig({ HTTP_REQUEST_TIMEOUT_MS: '10' })).to.throw(ConfigError, /HTTP_REQUEST_TIMEOUT_MS must be between/);
  });
});
