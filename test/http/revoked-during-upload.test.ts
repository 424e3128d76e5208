// A key revoked while a write's body is still arriving: the write is refused when the body is
// complete, with 401 KEY_REVOKED, and nothing is written (issue 17, finding 5).
import { connect } from 'node:net';
import { expect } from 'chai';
import { keys } from '../../src/store/keys.js';
import { testOps } from '../support/admin.js';
import { newWorkspace, useService } from '../support/service.js';

describe('a key revoked during a slow upload', () => {
  const t = useService();

  it('refuses the write once the body has arrived, and writes nothing', async () => {
    const ws = await newWorkspace(t.redis);
    const body = JSON.stringify({ userId: 'slow', key: 'coins', value: 1000 });
    const head =
      `POST /api/v1/data/set HTTP/1.1\r\nHost: x\r\nx-api-key: ${ws.apiKey}\r\ncontent-type: application/json\r\n` +
      `content-length: ${Buffer.byteLength(body)}\r\nconnection: close\r\n\r\n`;
    const answer = await new Promise<string>((resolve, reject) => {
      const socket = connect(t.service.port, '127.0.0.1');
      let text = '';
      socket.on('data', (d) => (text += d.toString()));
      socket.on('close', () => resolve(text));
      socket.on('error', reject);
      socket.on('connect', async () => {
        // Headers and half the body: authenticated and counted, then the upload stalls.
        socket.write(head + body.slice(0, 10));
        await new Promise((r) => setTimeout(r, 150));
        await testOps(t.redis).revokeKey(ws.keyId);
        await new Promise((r) => setTimeout(r, 150)); // the invalidation reaches the instance
        socket.write(body.slice(10));
      });
    });
    expect(answer).to.match(/^HTTP\/1\.1 401 /);
    expect(answer).to.include('"code":"KEY_REVOKED"');
    expect(await t.redis.exists(keys.player(ws.workspaceId, 'slow'))).to.equal(0);
  });
});
