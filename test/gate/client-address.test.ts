import { expect } from 'chai';
import { CidrList } from '../../src/domain/address.js';
import { resolveClientAddress, type ClientAddress, type ProxyTrust } from '../../src/gate/client-address.js';

function text(a: ClientAddress): string {
  return a.known ? a.text : `unknown: ${a.why}`;
}

describe('gate/client-address', () => {
  const none: ProxyTrust = { kind: 'none' };
  const oneHop: ProxyTrust = { kind: 'hops', hops: 1 };
  const twoHops: ProxyTrust = { kind: 'hops', hops: 2 };

  it('uses the socket address by default and ignores X-Forwarded-For', () => {
    expect(text(resolveClientAddress('127.0.0.1', '198.51.100.7', none))).to.equal('127.0.0.1');
    expect(text(resolveClientAddress('::ffff:203.0.113.5', undefined, none))).to.equal('203.0.113.5');
    expect(text(resolveClientAddress('::1', '198.51.100.7', none))).to.equal('::1');
  });

  it('with N trusted hops takes the Nth entry from the right, never one further left', () => {
    // The caller wrote "6.6.6.6"; our proxy appended the address it saw.
    expect(text(resolveClientAddress('10.0.0.2', '6.6.6.6, 198.51.100.7', oneHop))).to.equal('198.51.100.7');
    expect(text(resolveClientAddress('10.0.0.2', ['6.6.6.6', '198.51.100.7, 10.0.0.1'], twoHops))).to.equal('198.51.100.7');
    expect(text(resolveClientAddress('10.0.0.2', '[2001:db8::7]:4711', oneHop))).to.equal('2001:db8::7');
    expect(text(resolveClientAddress('10.0.0.2', '198.51.100.7:4711', oneHop))).to.equal('198.51.100.7');
  });

  it('with N trusted hops believes X-Forwarded-For only from a loopback or private peer (issue 17, finding 4)', () => {
    // A caller that reaches the port directly, from a public address, is judged by that address.
    expect(text(resolveClientAddress('203.0.113.5', '192.0.2.10', oneHop))).to.equal('203.0.113.5');
    expect(text(resolveClientAddress('::ffff:203.0.113.5', '192.0.2.10', oneHop))).to.equal('203.0.113.5');
    expect(text(resolveClientAddress('2001:db8::5', '192.0.2.10', oneHop))).to.equal('2001:db8::5');
    // Nor does it become unknown for sending no header at all.
    expect(text(resolveClientAddress('203.0.113.5', undefined, oneHop))).to.equal('203.0.113.5');
    // Loopback, private and unique-local peers are the operator's proxies by default.
    for (const peer of ['127.0.0.1', '::1', '10.1.2.3', '172.16.0.9', '192.168.1.1', 'fd00::1']) {
      expect(text(resolveClientAddress(peer, '192.0.2.10', oneHop)), peer).to.equal('192.0.2.10');
    }
  });

  it('leaves the address unknown when the chain is too short or the trusted entry is garbage', () => {
    const short = resolveClientAddress('10.0.0.2', undefined, oneHop);
    expect(short.known).to.equal(false);
    expect(text(short)).to.match(/fewer than TRUST_PROXY_HOPS=1/);
    expect(resolveClientAddress('10.0.0.2', '198.51.100.7', twoHops).known).to.equal(false);
    expect(resolveClientAddress('10.0.0.2', '6.6.6.6, unknown', oneHop).known).to.equal(false);
    expect(resolveClientAddress(undefined, '6.6.6.6', none).known).to.equal(false);
  });

  it('with trusted proxy ranges walks left only through the proxies', () => {
    const trust: ProxyTrust = { kind: 'cidrs', proxies: CidrList.of(['10.0.0.0/8', 'fd00::/8']) };
    expect(text(resolveClientAddress('10.0.0.2', '6.6.6.6, 198.51.100.7, 10.1.1.1', trust))).to.equal('198.51.100.7');
    // A direct caller (not a proxy) is taken as is; its X-Forwarded-For is its own invention.
    expect(text(resolveClientAddress('198.51.100.9', '6.6.6.6', trust))).to.equal('198.51.100.9');
    expect(text(resolveClientAddress('fd00::2', '2001:db8::7', trust))).to.equal('2001:db8::7');
    expect(resolveClientAddress('10.0.0.2', 'garbage', trust).known).to.equal(false);
  });
});
