// The bench's wrk driver (bench/lib/wrk.ts) against a real HTTP server: every rotating request is
// sent as built (method, path, headers, body), in turn, and the summary counts what the server saw.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { expect } from 'chai';
import type { Request as AutocannonRequest } from 'autocannon';
import { runWrk, wrkAvailable } from '../../bench/lib/wrk.js';

describe('bench: the wrk driver', function () {
  this.timeout(20_000);
  let server: Server;
  const seen = new Map<string, number>();
  let refused = 0;

  before(async function () {
    if (!(await wrkAvailable())) this.skip();
    server = createServer((req, res) => {
      let body = '';
      req.on('data', (c: Buffer) => (body += c.toString()));
      req.on('end', () => {
        const line = `${req.method} ${req.url} ${req.headers['x-api-key'] ?? ''} ${body}`;
        seen.set(line, (seen.get(line) ?? 0) + 1);
        if (req.url === '/refuse') refused++;
        res.writeHead(req.url === '/refuse' ? 429 : 200, { 'content-length': '2' });
        res.end('{}');
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  });
  after(() => server?.close());

  it('sends the scenario’s requests in turn and counts the answers of 400 and more', async () => {
    let n = 0;
    const specs = [
      { method: 'GET', path: '/a?userId=1', headers: { 'x-api-key': 'k1' }, body: '' },
      { method: 'POST', path: '/b', headers: { 'x-api-key': 'k2', 'content-type': 'application/json' }, body: '{"v":"x\\"y"}' },
      { method: 'GET', path: '/refuse', headers: { 'x-api-key': 'k3' }, body: '' },
    ];
    const requests = [
      {
        setupRequest: (req: Record<string, unknown>) => Object.assign(req, specs[n++ % specs.length]),
      } as unknown as AutocannonRequest,
    ];
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    const result = await runWrk(url, requests, 4, 1);
    expect(result.requests).to.be.greaterThan(30);
    expect([...seen.keys()].sort()).to.deep.equal(['GET /a?userId=1 k1 ', 'GET /refuse k3 ', 'POST /b k2 {"v":"x\\"y"}']);
    const counts = [...seen.values()];
    // In turn: each of the three within a few of a third (requests in flight at the end aside).
    for (const c of counts) expect(c).to.be.within(result.requests / 3 - 10, result.requests / 3 + 10);
    expect(result.non2xx).to.be.within(refused - 4, refused);
    expect(result.p50).to.be.greaterThan(0);
  });
});
