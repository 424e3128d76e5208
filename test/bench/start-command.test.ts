// The bench's A/B settings for the compare build: node flags and environment settings, each
// given on one line and applied to that build only.
import { expect } from 'chai';
import { compareEnv, compareFlags } from '../../bench/lib/start-command.js';

describe('bench/lib/start-command', () => {
  it('reads BENCH_COMPARE_ENV as NAME=value pairs, a value may hold "="', () => {
    expect(compareEnv({ BENCH_COMPARE_ENV: ' HISTORY_MAX_VERSIONS=0  LOG_LEVEL=warn X=a=b ' })).to.deep.equal({
      HISTORY_MAX_VERSIONS: '0',
      LOG_LEVEL: 'warn',
      X: 'a=b',
    });
    expect(compareEnv({})).to.deep.equal({});
  });

  it('refuses a BENCH_COMPARE_ENV word that is not NAME=value', () => {
    expect(() => compareEnv({ BENCH_COMPARE_ENV: 'HISTORY_MAX_VERSIONS' })).to.throw(/not NAME=value/);
    expect(() => compareEnv({ BENCH_COMPARE_ENV: '=0' })).to.throw(/not NAME=value/);
  });

  it('reads BENCH_COMPARE_FLAGS as space-separated node flags', () => {
    expect(compareFlags({ BENCH_COMPARE_FLAGS: '--max-semi-space-size=16  --jitless' })).to.deep.equal(['--max-semi-space-size=16', '--jitless']);
  });
});
