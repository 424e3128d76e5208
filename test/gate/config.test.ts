import { expect } from 'chai';
import { ConfigError, loadConfig } from '../../src/config.js';

describe('gate settings', () => {
  it('defaults to off, both header checks on, no ranges, no trusted proxies', () => {
    const { gate } = loadConfig({});
    expect(gate).to.deep.include({ mode: 'off', checkUserAgent: true, checkRobloxId: true, trustProxyHops: 0, banReloadMs: 60_000 });
    expect(gate.allowedCidrs).to.deep.equal([]);
    expect(gate.trustedProxyCidrs).to.deep.equal([]);
  });

  it('reads every setting', () => {
    const { gate } = loadConfig({
      GATE_MODE: 'enforce',
      GATE_ALLOWED_CIDRS: '128.116.0.0/17, 2001:db8::/32',
      GATE_CHECK_USER_AGENT: 'off',
      GATE_CHECK_ROBLOX_ID: 'false',
      TRUSTED_PROXY_CIDRS: '10.0.0.0/8',
      GATE_BAN_RELOAD_MS: '5000',
    });
    expect(gate).to.deep.include({ mode: 'enforce', checkUserAgent: false, checkRobloxId: false, banReloadMs: 5000 });
    expect(gate.allowedCidrs).to.deep.equal(['128.116.0.0/17', '2001:db8::/32']);
    expect(gate.trustedProxyCidrs).to.deep.equal(['10.0.0.0/8']);
  });

  const bad: [Record<string, string>, RegExp][] = [
    [{ GATE_MODE: 'on' }, /GATE_MODE must be one of off, report, enforce/],
    [{ GATE_ALLOWED_CIDRS: '128.116.0.0/17,128.116.0.0/40' }, /GATE_ALLOWED_CIDRS .*"128.116.0.0\/40"/],
    [{ TRUSTED_PROXY_CIDRS: 'proxy.local' }, /TRUSTED_PROXY_CIDRS/],
    [{ GATE_CHECK_USER_AGENT: 'maybe' }, /GATE_CHECK_USER_AGENT must be on or off/],
    [{ TRUST_PROXY_HOPS: '-1' }, /TRUST_PROXY_HOPS/],
    [{ TRUST_PROXY_HOPS: '11' }, /TRUST_PROXY_HOPS must be between 0 and 10/],
    [{ TRUST_PROXY_HOPS: '1', TRUSTED_PROXY_CIDRS: '10.0.0.0/8' }, /either TRUST_PROXY_HOPS or TRUSTED_PROXY_CIDRS/],
    [{ GATE_MODE: 'report', GATE_CHECK_USER_AGENT: '0', GATE_CHECK_ROBLOX_ID: '0' }, /checks nothing/],
    [{ GATE_BAN_RELOAD_MS: '10' }, /GATE_BAN_RELOAD_MS/],
  ];
  for (const [env, message] of bad) {
    it(`refuses ${JSON.stringify(env)} with a message naming the variable`, () => {
      expect(() => loadConfig(env)).to.throw(ConfigError, message);
    });
  }
});
