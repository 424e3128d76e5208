import { expect } from 'chai';
import { apiKeyOf, hashApiKey } from '../../src/domain/api-key.js';

describe('hashApiKey', () => {
  it('is the hex SHA-256 of the UTF-8 raw key, so stored hashes keep matching', () => {
    expect(hashApiKey('abc')).to.equal('ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad');
    expect(hashApiKey('pds_é')).to.equal('0cc363523f87a403270df308b59e4475220334344ed1837b882ca2ef5263a80e');
  });
});

describe('apiKeyOf', () => {
  it('reads x-api-key when it is one non-empty value, and nothing else', () => {
    expect(apiKeyOf({ 'x-api-key': 'pds_abc' })).to.equal('pds_abc');
    expect(apiKeyOf({ 'x-api-key': '' })).to.equal(undefined);
    expect(apiKeyOf({})).to.equal(undefined);
    expect(apiKeyOf({ 'x-api-key': ['pds_a', 'pds_b'] as unknown as string })).to.equal(undefined);
  });
});
