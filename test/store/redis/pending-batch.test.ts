import { expect } from 'chai';
import { PendingBatch } from '../../../src/store/redis/pending-batch.js';

describe('PendingBatch (store/redis/pending-batch.ts)', () => {
  it('hands a flush what was pending, whole, and keeps what came meanwhile for the next', async () => {
    const written: Array<Array<[string, number]>> = [];
    let release: () => void = () => {};
    const batch = new PendingBatch<string, number>(async (taken) => {
      written.push([...taken]);
      await new Promise<void>((r) => (release = r));
    });
    batch.set('a', 1);
    batch.entry('b', () => 2);
    expect(batch.entry('b', () => 99)).to.equal(2);
    const first = batch.flush();
    batch.set('c', 3);
    expect(batch.flush()).to.equal(first);
    release();
    await first;
    expect(written).to.deep.equal([[['a', 1], ['b', 2]]]);
    expect(batch.size).to.equal(1);
    const second = batch.flush();
    release();
    await second;
    expect(written[1]).to.deep.equal([['c', 3]]);
  });

  it('does not call the writer with nothing pending, unless told to (a heartbeat)', async () => {
    let calls = 0;
    await new PendingBatch<string, number>(async () => void calls++).flush();
    expect(calls).to.equal(0);
    await new PendingBatch<string, number>(async () => void calls++, { writeEmpty: true }).flush();
    expect(calls).to.equal(1);
  });

  it('keeps what the writer puts back when its write fails, and stop flushes it and rejects as the flush does', async () => {
    let fail = true;
    const stored = new Map<string, number>();
    const batch: PendingBatch<string, number> = new PendingBatch<string, number>(async (taken) => {
      if (fail) {
        for (const [k, v] of taken) batch.set(k, (batch.get(k) ?? 0) + v);
        throw new Error('write failed');
      }
      for (const [k, v] of taken) stored.set(k, (stored.get(k) ?? 0) + v);
    });
    batch.set('a', 1);
    await batch.flush().then(
      () => expect.fail('the flush should reject'),
      (err: Error) => expect(err.message).to.equal('write failed'),
    );
    batch.set('b', 2);
    expect(batch.get('a')).to.equal(1);
    await batch.stop().then(
      () => expect.fail('the stop should reject'),
      (err: Error) => expect(err.message).to.equal('write failed'),
    );
    fail = false;
    await batch.stop();
    expect([...stored]).to.deep.equal([['a', 1], ['b', 2]]);
    expect(batch.size).to.equal(0);
  });
});
