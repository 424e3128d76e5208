import { expect } from 'chai';
import { LimitHints } from '../../src/store/limit-hints.js';

describe('LimitHints', () => {
  it('refuses only what Redis said is over its limit, until the window resets', () => {
    const hints = new LimitHints();
    expect(hints.refuse('ws1', 60, 1000)).to.equal(undefined);
    hints.remember('ws1', 60, 5000);
    expect(hints.refuse('ws1', 60, 1000)).to.equal(4000);
    expect(hints.refuse('ws2', 60, 1000)).to.equal(undefined);
    expect(hints.refuse('ws1', 60, 4999)).to.equal(1);
    expect(hints.refuse('ws1', 60, 5000)).to.equal(undefined);
    expect(hints.size).to.equal(0);
  });

  it('ignores a hint taken under another limit (the plan changed)', () => {
    const hints = new LimitHints();
    hints.remember('ws1', 60, 5000);
    expect(hints.refuse('ws1', 300, 1000)).to.equal(undefined);
    expect(hints.refuse('ws1', 60, 1000)).to.equal(undefined);
  });

  it('hands over the refusals for the usage counters once, and forgets expired hints', () => {
    const hints = new LimitHints();
    hints.remember('ws1', 60, 5000);
    hints.remember('ws2', 60, 2000);
    hints.refuse('ws1', 60, 1000);
    hints.refuse('ws1', 60, 1001);
    hints.refuse('ws2', 60, 1000);
    expect(hints.drain(3000)).to.deep.equal([
      { workspaceId: 'ws1', limited: 2 },
      { workspaceId: 'ws2', limited: 1 },
    ]);
    expect(hints.drain(3000)).to.deep.equal([]);
    expect(hints.size).to.equal(1);
  });
});
