import { expect } from 'chai';
import fc from 'fast-check';
import { generateApiKey, hashApiKey, looksLikeApiKey, visiblePrefix } from '../../src/domain/api-key.js';
import { decodeEntry, encodeEntry, isoTime } from '../../src/domain/entry.js';
import { normalizeUserId } from '../../src/domain/ids.js';
import { checkValue } from '../../src/domain/value.js';

describe('domain', () => {
  it('normalizeUserId: numbers become their decimal string; bad ids are undefined', () => {
    expect(normalizeUserId(42)).to.equal('42');
    expect(normalizeUserId('42')).to.equal('42');
    expect(normalizeUserId(0)).to.equal('0');
    expect(normalizeUserId('007')).to.equal('007');
    for (const bad of [-1, 1.5, NaN, Infinity, 2 ** 53, '', 'a b', 'x'.repeat(65), null, undefined, {}]) {
      expect(normalizeUserId(bad), String(bad)).to.equal(undefined);
    }
  });

  it('API keys: pds_ + 40 base62, distinct, hashed with SHA-256, shown by prefix only', () => {
    const a = generateApiKey();
    const b = generateApiKey();
    expect(a).to.match(/^pds_[0-9A-Za-z]{40}$/);
    expect(a).to.not.equal(b);
    expect(looksLikeApiKey(a)).to.equal(true);
    expect(looksLikeApiKey('pds_short')).to.equal(false);
    expect(hashApiKey('abc')).to.equal('ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad');
    expect(visiblePrefix(a)).to.equal(a.slice(0, 10));
  });

  it('entries: encode and decode [updated_at_ms,json], refusing other shapes', () => {
    const stored = encodeEntry('{"a":[1,2]}', 1700000000123);
    expect(stored).to.equal('[1700000000123,{"a":[1,2]}]');
    expect(JSON.parse(stored)).to.deep.equal([1700000000123, { a: [1, 2] }]);
    expect(decodeEntry(stored)).to.deep.equal({ updatedAtMs: 1700000000123, valueJson: '{"a":[1,2]}' });
    for (const bad of ['', '5', '[x,1]', '[1,2', '{"a":1}', '[,1]']) expect(decodeEntry(bad), bad).to.equal(undefined);
  });

  it('checkValue: depth and finiteness, iteratively', () => {
    expect(checkValue(1, 1)).to.equal(undefined);
    expect(checkValue([1], 1)).to.equal(undefined);
    expect(checkValue([[1]], 1)).to.match(/deeper than 1/);
    expect(checkValue({ a: Infinity }, 5)).to.match(/too large/);
    expect(checkValue(null, 5)).to.match(/null/);
    let deep: unknown = 1;
    for (let i = 0; i < 100_000; i++) deep = [deep];
    expect(checkValue(deep, 32)).to.match(/deeper than 32/);
  });
});

describe('isoTime', () => {
  it('formats exactly as Date#toISOString for any instant, whatever the previous call', () => {
    const instant = fc.oneof(
      fc.integer({ min: 0, max: 253_402_300_799_999 }),
      fc.integer({ min: Date.UTC(2026, 0, 1), max: Date.UTC(2027, 0, 1) }),
      fc.constantFrom(0, 86_399_999, 86_400_000, Date.UTC(2026, 11, 31, 23, 59, 59, 999), 253_402_300_799_999),
    );
    fc.assert(
      fc.property(fc.array(instant, { minLength: 1, maxLength: 5 }), (instants) => {
        for (const ms of instants) expect(isoTime(ms)).to.equal(new Date(ms).toISOString());
      }),
      { numRuns: 2000 },
    );
  });

  it('falls back to Date for instants outside four-digit years and for fractions', () => {
    expect(isoTime(-1)).to.equal(new Date(-1).toISOString());
    expect(isoTime(253_402_300_800_000)).to.equal('+010000-01-01T00:00:00.000Z');
    expect(isoTime(1.5)).to.equal(new Date(1.5).toISOString());
  });
});
