// No spelling of a route path reaches a handler without its credentials. The routers once
// matched routes case-insensitively while their auth middleware matched the prefix exactly, so
// POST /ADMIN/V1/workspaces created a workspace with no admin token, and GET /API/V1/DATA ran a
// handler without a principal (a 500).
import { expect } from 'chai';
import fc from 'fast-check';
import type { RunningService } from '../../src/server.js';
import { send } from '../support/fuzz.js';
import { startTestService } from '../support/service.js';

const ROUTES: Array<[string, string]> = [
  ['GET', '/api/v1/ping'],
  ['GET', '/api/v1/data?userId=1'],
  ['POST', '/api/v1/data/set'],
  ['POST', '/api/v1/data/increment'],
  ['POST', '/api/v1/data/delete'],
  ['GET', '/api/v1/leaderboards/coins'],
  ['POST', '/api/v1/leaderboards/coins/set'],
  ['GET', '/admin/v1/workspaces/ws_x/leaderboards'],
  ['POST', '/admin/v1/workspaces'],
  ['GET', '/admin/v1/workspaces/ws_x'],
  ['GET', '/admin/v1/workspaces/ws_x/keys'],
  ['POST', '/admin/v1/workspaces/ws_x/keys'],
  ['POST', '/admin/v1/keys/key_x/revoke'],
];

/** The path with some letters flipped in case, some characters percent-encoded, and odd slashes or dots. */
const spelling = (path: string) =>
  fc
    .tuple(
      fc.oneof(
        ...[['keep', 'upper'], ['keep', 'encode'], ['keep', 'upper', 'encode'], ['upper']].map((choices) =>
          fc.array(fc.constantFrom(...choices), { minLength: path.length, maxLength: path.length }),
        ),
      ),
      fc.constantFrom('', '/', '//', '/.', '%2f', ';x', '%00'),
      fc.constantFrom('', '/', '/./', '//'),
    )
    .map(([edits, suffix, prefix]) => {
      const [pathname, query] = path.split('?') as [string, string | undefined];
      const spelled = [...pathname]
        .map((ch, i) => {
          if (ch === '/' || i === 0) return ch;
          if (edits[i] === 'upper') return ch.toUpperCase();
          if (edits[i] === 'encode') return '%' + ch.charCodeAt(0).toString(16).padStart(2, '0');
          return ch;
        })
        .join('');
      return prefix.replace(/\/$/, '') + spelled + suffix + (query ? `?${query}` : '');
    });

describe('route spellings and credentials', function () {
  this.timeout(60_000);
  let service: RunningService;
  before(async () => {
    service = await startTestService({ ADMIN_TOKEN: 'route-auth-admin-token-123456' });
  });
  after(async () => {
    await service?.close();
  });

  it('answers no spelling of any route with 2xx or 5xx without credentials', async () => {
    for (const [method, path] of ROUTES) {
      const base = path.startsWith('/admin') ? service.opsUrl : service.baseUrl.replace(/\/api\/v1$/, '');
      await fc.assert(
        fc.asyncProperty(spelling(path), async (spelled) => {
          const body = method === 'POST' ? Buffer.from('{"name":"x","userId":"1","key":"k","value":1}') : undefined;
          const res = await send(base, { method, path: spelled, headers: { 'content-type': 'application/json' }, body });
          expect(res.status, `${method} ${spelled}: ${res.text}`).to.be.within(400, 499);
          expect(JSON.parse(res.text)).to.have.property('success', false);
        }),
        { numRuns: 60 },
      );
    }
  });
});
