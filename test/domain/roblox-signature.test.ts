// The platform's webhook signature, checked against signatures computed here by hand from the
// documented algorithm (Base64 HMAC-SHA256 of "<t>.<body>"), not by the module under test.
import { createHmac } from 'node:crypto';
import { expect } from 'chai';
import { FUTURE_SKEW_SECONDS, judgeTimestamp, parseSignatureHeader, signatureHeaderFor, signatureMatches } from '../../src/domain/roblox-signature.js';

const SECRET = 'dashboard-secret-value';
const body = Buffer.from('{"NotificationId":"a","EventType":"SampleNotification"}');
const byHand = (t: number, b: Buffer, secret = SECRET) => createHmac('sha256', secret).update(`${t}.${b.toString('utf8')}`).digest('base64');

describe('domain/roblox-signature', () => {
  it('accepts the documented signature of the body as sent, and nothing else', () => {
    const header = parseSignatureHeader(`t=1700000000,v1=${byHand(1700000000, body)}`)!;
    expect(header.timestamp).to.equal(1700000000);
    expect(signatureMatches(SECRET, header, body)).to.equal(true);
    expect(signatureMatches('another-secret-value', header, body)).to.equal(false);
    // The same JSON re-serialised (spaces) is another body.
    expect(signatureMatches(SECRET, header, Buffer.from('{"NotificationId": "a","EventType":"SampleNotification"}'))).to.equal(false);
    // The timestamp is signed too.
    const moved = parseSignatureHeader(`t=1700000001,v1=${byHand(1700000000, body)}`)!;
    expect(signatureMatches(SECRET, moved, body)).to.equal(false);
    expect(signatureHeaderFor(SECRET, 1700000000, body)).to.equal(`t=1700000000,v1=${byHand(1700000000, body)}`);
  });

  it('accepts any of several v1 signatures, and skips schemes it does not know', () => {
    const header = parseSignatureHeader(`t=5,v1=${byHand(5, body, 'old-secret')},v1=${byHand(5, body)},v2=whatever`)!;
    expect(header.signatures).to.have.length(2);
    expect(signatureMatches(SECRET, header, body)).to.equal(true);
  });

  it('refuses malformed headers', () => {
    for (const raw of [undefined, '', 't=1', 'v1=abc', 't=x,v1=abc', 't=1,v1=not base64!', 't=1,t=2,v1=abc', 'garbage', `t=1,v1=${'A'.repeat(2000)}`]) {
      expect(parseSignatureHeader(raw), String(raw)).to.equal(undefined);
    }
  });

  it('judges the timestamp: stale past the window, future past the skew', () => {
    const now = 1_700_000_000_000;
    const t = now / 1000;
    expect(judgeTimestamp(t, now, 600)).to.equal('ok');
    expect(judgeTimestamp(t - 600, now, 600)).to.equal('ok');
    expect(judgeTimestamp(t - 601, now, 600)).to.equal('stale');
    expect(judgeTimestamp(t + FUTURE_SKEW_SECONDS, now, 600)).to.equal('ok');
    expect(judgeTimestamp(t + FUTURE_SKEW_SECONDS + 1, now, 600)).to.equal('future');
  });
});
