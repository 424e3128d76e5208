import { expect } from 'chai';
import { parseHistoryEntry, rebuildAt } from '../../src/store/player-history.js';

function entry(v: number, prev: Record<string, string | null>): Buffer {
  const keys = Object.keys(prev);
  const lens = keys.map((k) => (prev[k] === null ? -1 : Buffer.byteLength(prev[k]!)));
  const header = JSON.stringify({ v, t: 1000 + v, k: 'set', by: 'key:abc', keys, lens });
  return Buffer.concat([Buffer.from(header + '\n'), ...keys.map((k) => Buffer.from(prev[k] ?? ''))]);
}

describe('store/player-history', () => {
  it('splits replaced entries by byte length, multi-byte text included', () => {
    const e = parseHistoryEntry(entry(3, { a: 'héllo\nx', b: null, c: '€' }));
    expect(e.version).to.equal(3);
    expect(e.previous.get('a')!.toString()).to.equal('héllo\nx');
    expect(e.previous.get('b')).to.equal(null);
    expect(e.previous.get('c')!.toString()).to.equal('€');
  });

  it('undoes newest first down to the target, and refuses a gap', () => {
    const current = new Map([['a', Buffer.from('3')], ['b', Buffer.from('new')]]);
    const list = [entry(3, { a: '2' }), entry(2, { a: '1', b: null })].map(parseHistoryEntry);
    const at = (n: number) => {
      const m = rebuildAt(current, 3, list, n);
      return m && Object.fromEntries([...m].map(([k, v]) => [k, v.toString()]));
    };
    expect(at(3)).to.deep.equal({ a: '3', b: 'new' });
    expect(at(2)).to.deep.equal({ a: '2', b: 'new' });
    expect(at(1)).to.deep.equal({ a: '1' });
    expect(at(0)).to.deep.equal({});
    expect(rebuildAt(current, 3, list.slice(1), 2)).to.equal(null);
    expect(rebuildAt(current, 3, list.slice(0, 1), 0)).to.equal(null);
    expect(at(4)).to.equal(null);
  });
});
