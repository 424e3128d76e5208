// The admin side's settings: defaults, and a clear error naming the variable.
import { expect } from 'chai';
import { ConfigError, loadConfig } from '../../src/config.js';

describe('admin settings', () => {
  it('default to a 5 s last-use flush and 10000 audit entries', () => {
    const config = loadConfig({});
    expect(config.keyLastUsedFlushMs).to.equal(5000);
    expect(config.auditMaxEntries).to.equal(10_000);
  });

  it('refuse out-of-range values, naming the variable', () => {
    for (const [name, value] of [
      ['KEY_LAST_USED_FLUSH_MS', '5'],
      ['KEY_LAST_USED_FLUSH_MS', 'soon'],
      ['AUDIT_MAX_ENTRIES', '0'],
    ] as const) {
      expect(() => loadConfig({ [name]: value }), `${name}=${value}`).to.throw(ConfigError, name);
    }
  });
});
