// The TypeScript code block of docs/clients.md, run as written against the real service by
// tsx. Only the package name is replaced. (The Luau examples live
// in clients/luau/README.md and are run by luau-readme.test.ts.)
import { expect } from 'chai';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import type { CreatedWorkspace } from '../../src/admin/operations.js';
import { newWorkspace, useService } from '../support/service.js';

const section = readFileSync(new URL('../../docs/clients.md', import.meta.url), 'utf8');
const blocks = (lang: string) => [...section.matchAll(new RegExp('```' + lang + '\\n([\\s\\S]*?)```', 'g'))].map((m) => m[1]!);
const [TS_EXAMPLE] = blocks('ts');

function withPlaceholders(code: string | undefined, replacements: Record<string, string>): string {
  expect(code, 'docs/clients.md code block').to.be.a('string');
  let out = code!;
  for (const [placeholder, value] of Object.entries(replacements)) {
    expect(out, `docs/clients.md example uses ${placeholder}`).to.include(placeholder);
    out = out.split(placeholder).join(value);
  }
  return out;
}

describe('docs/clients.md TypeScript example (against the service)', () => {
  const t = useService();
  let ws: CreatedWorkspace;
  beforeEach(async () => {
    ws = await newWorkspace(t.redis);
  });

  it('the TypeScript example runs as written', async () => {
    const clientUrl = pathToFileURL(new URL('../../clients/typescript/src/index.ts', import.meta.url).pathname).href;
    const dir = mkdtempSync(join(tmpdir(), 'pds-readme-'));
    const file = join(dir, 'example.mts'); // an ES module, as the example's top-level await needs
    writeFileSync(file, withPlaceholders(TS_EXAMPLE, { '@player-data-service/client': clientUrl }));
    const logged: unknown[][] = [];
    const realLog = console.log;
    process.env['PDS_URL'] = t.service.baseUrl;
    process.env['PDS_API_KEY'] = ws.apiKey;
    console.log = (...args: unknown[]) => void logged.push(args);
    try {
      await import(pathToFileURL(file).href);
    } finally {
      console.log = realLog;
      delete process.env['PDS_URL'];
      delete process.env['PDS_API_KEY'];
      rmSync(dir, { recursive: true, force: true });
    }
    expect(logged).to.have.length(4);
    expect(logged[0]).to.deep.equal(['connected to test (pro)']);
    expect(logged[1]).to.deep.equal([{ coins: 0, total: 100, all: { inventory: ['sword', 'shield'], coins: 100 } }]);
    expect(logged[2]![0]).to.equal(409);
    expect(logged[2]![2]).to.equal(false);
    expect(logged[3]).to.deep.equal([2, 'keys deleted']);
  });
});
