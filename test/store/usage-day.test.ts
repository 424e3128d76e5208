import { expect } from 'chai';
import { usageDay } from '../../src/store/rate-limiter.js';

describe('usageDay', () => {
  it('names the UTC day of any instant, across day boundaries in both directions', () => {
    expect(usageDay(Date.UTC(2026, 0, 31, 23, 59, 59, 999))).to.equal('20260131');
    expect(usageDay(Date.UTC(2026, 1, 1))).to.equal('20260201');
    expect(usageDay(Date.UTC(2026, 0, 31, 12))).to.equal('20260131');
    expect(usageDay(Date.UTC(1999, 11, 31, 1))).to.equal('19991231');
  });
});
