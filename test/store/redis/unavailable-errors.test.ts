// store/redis/redis.ts: which ioredis errors mean "Redis cannot serve right now" (503 and a
// retry) and which may have run all the same (OUTCOME_UNKNOWN for a write).
import { expect } from 'chai';
import { isUnavailableError, mayHaveRun } from '../../../src/store/redis/redis.js';

describe('ioredis errors as the service reads them', () => {
  it("takes a cluster auto-pipeline's refusal of a batch spanning slot groups as unavailable, and as never sent", () => {
    // ioredis 6, autoPipelining.js -> Pipeline.exec, thrown while the cluster's slot table is refreshed.
    const err = new Error('All keys in the pipeline should belong to the same slots allocation group');
    expect(isUnavailableError(err)).to.equal(true);
    expect(mayHaveRun(err, true)).to.equal(false);
  });

  it('keeps a bug a bug: an unknown error is not "unavailable"', () => {
    expect(isUnavailableError(new TypeError("Cannot read properties of undefined (reading 'x')"))).to.equal(false);
    expect(isUnavailableError(new Error('Command timed out'))).to.equal(true);
    expect(mayHaveRun(new Error('Command timed out'), false)).to.equal(true);
  });
});
