import { expect } from 'chai';
import { singleFlight } from '../../../src/store/redis/single-flight.js';

describe('singleFlight', () => {
  it('shares a run under way, and starts a new one after it settled, even when it failed', async () => {
    let runs = 0;
    let fail = false;
    const flush = singleFlight(async () => {
      runs++;
      await new Promise((r) => setTimeout(r, 20));
      if (fail) throw new Error('write failed');
    });
    await Promise.all([flush(), flush(), flush()]);
    expect(runs).to.equal(1);
    fail = true;
    const failed = await Promise.allSettled([flush(), flush()]);
    expect(failed.map((r) => r.status)).to.deep.equal(['rejected', 'rejected']);
    expect(runs).to.equal(2);
    fail = false;
    await flush();
    expect(runs).to.equal(3);
  });
});
