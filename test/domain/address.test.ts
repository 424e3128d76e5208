import { expect } from 'chai';
import { CidrList, normalizeIp, parseCidr, parseCidrList, parseIp } from '../../src/domain/address.js';

describe('domain/address', () => {
  it('normalizes IPv4, IPv6 and IPv4-mapped IPv6 to one text each', () => {
    expect(normalizeIp('128.116.1.2')).to.equal('128.116.1.2');
    expect(normalizeIp('2001:DB8:0:0:0:0:0:1')).to.equal('2001:db8::1');
    expect(normalizeIp('::ffff:128.116.1.2')).to.equal('128.116.1.2');
    expect(normalizeIp('fe80::1%eth0')).to.equal('fe80::1');
  });

  it('refuses lenient spellings that would let one address escape its own ban', () => {
    for (const raw of ['127.1', '0x7f.0.0.1', '010.0.0.1', '1.2.3', '', 'example.com', '1.2.3.4.5', '256.1.1.1']) {
      expect(normalizeIp(raw), raw).to.equal(undefined);
    }
  });

  it('parses ranges, clears host bits, and reads a single address as /32 or /128', () => {
    expect(parseCidr('128.116.5.6/17')?.text).to.equal('128.116.0.0/17');
    expect(parseCidr('2001:db8:1:2::5/32')?.text).to.equal('2001:db8::/32');
    expect(parseCidr('203.0.113.9')?.text).to.equal('203.0.113.9/32');
    expect(parseCidr('2001:db8::9')?.text).to.equal('2001:db8::9/128');
    expect(parseCidr('::ffff:128.116.0.0/113')?.text).to.equal('128.116.0.0/17');
    for (const bad of ['10.0.0.0/33', '2001:db8::/129', '10.0.0.0/', '10.0.0.0/x', '/8', '10.0.0.0/8/8', 'nope']) {
      expect(parseCidr(bad), bad).to.equal(undefined);
    }
  });

  it('matches IPv4 and IPv6 ranges, each only against its own family', () => {
    const list = CidrList.of(['128.116.0.0/17', '2001:db8:100::/40']);
    expect(list.contains(parseIp('128.116.127.255')!)).to.equal(true);
    expect(list.contains(parseIp('128.116.128.0')!)).to.equal(false);
    expect(list.contains(parseIp('2001:db8:1ff:ffff::1')!)).to.equal(true);
    expect(list.contains(parseIp('2001:db8:200::1')!)).to.equal(false);
    expect(list.contains(parseIp('::ffff:128.116.0.1')!)).to.equal(true);
    expect(CidrList.of(['0.0.0.0/0']).contains(parseIp('::1')!)).to.equal(false);
  });

  it('reads a comma-separated list and names the first bad entry', () => {
    expect(parseCidrList(' 128.116.0.0/17 , ,2001:db8::/32,128.116.1.0/17')).to.deep.equal({
      ok: true,
      cidrs: ['128.116.0.0/17', '2001:db8::/32'],
    });
    expect(parseCidrList('10.0.0.0/8,10.0.0.0/99')).to.deep.equal({ ok: false, bad: '10.0.0.0/99' });
  });
});
