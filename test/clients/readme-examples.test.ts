// The code blocks of the README's "Client modules" section, run as written against the real
// service: the Luau ones in the Luau VM with the platform stand-in, the TypeScript one by tsx.
// Only the placeholder URL, key and package name are replaced.
import { expect } from 'chai';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import type { CreatedWorkspace } from '../../src/admin/operations.js';
import { keys } from '../../src/store/keys.js';
import { call, newWorkspace, startTestService, useService } from '../support/service.js';
import { startLuauVm, type LuauVm } from './luau-vm.js';

const readme = readFileSync(new URL('../../README.md', import.meta.url), 'utf8');
const section = readme.slice(readme.indexOf('## Client modules'));
const blocks = (lang: string) => [...section.matchAll(new RegExp('```' + lang + '\\n([\\s\\S]*?)```', 'g'))].map((m) => m[1]!);
const [SERVER_SCRIPT, RETRY_HELPER] = blocks('luau');
const [TS_EXAMPLE] = blocks('ts');

function withPlaceholders(code: string | undefined, replacements: Record<string, string>): string {
  expect(code, 'README code block').to.be.a('string');
  let out = code!;
  for (const [placeholder, value] of Object.entries(replacements)) {
    expect(out, `README example uses ${placeholder}`).to.include(placeholder);
    out = out.split(placeholder).join(value);
  }
  return out;
}

describe('README client examples (against the service)', () => {
  const t = useService();
  let ws: CreatedWorkspace;
  let vm: LuauVm;
  before(async () => {
    vm = await startLuauVm();
  });
  beforeEach(async () => {
    ws = await newWorkspace(t.redis);
    await vm.reset();
  });

  const stored = async (userId: number) => {
    const res = await call(t.service, 'GET', `/data?userId=${userId}`, { key: ws.apiKey });
    return res.status === 404 ? undefined : res.body.data;
  };
  const setsFor = (userId: number) =>
    vm.requests.filter((r) => r.url.endsWith('/data/set') && JSON.parse(r.body!).userId === String(userId)).length;

  it('the Luau server script loads on join, increments on purchase, saves once on leave and on close', async () => {
    await call(t.service, 'POST', '/data/set', { key: ws.apiKey, body: { userId: 101, key: 'level', value: 5 } });
    await call(t.service, 'POST', '/data/set', { key: ws.apiKey, body: { userId: 101, key: 'inventory', value: ['axe'] } });
    await vm.run(
      withPlaceholders(SERVER_SCRIPT, { 'https://pds.example.com/api/v1': t.service.baseUrl, YOUR_API_KEY: ws.apiKey }),
    );

    const [granted, unknown] = await vm.run(`
      local Players = game:GetService("Players")
      local MarketplaceService = game:GetService("MarketplaceService")
      Players.__join(101)
      Players.__join(102)
      local granted = MarketplaceService.ProcessReceipt({ PlayerId = 102, ProductId = 1234567, PurchaseId = "p1" })
      local unknown = MarketplaceService.ProcessReceipt({ PlayerId = 102, ProductId = 42, PurchaseId = "p2" })
      Players.__leave(101)
      Players.__leave(102)
      return granted, unknown`);
    expect([granted, unknown]).to.deep.equal(['PurchaseGranted', 'NotProcessedYet']);
    expect(await stored(101)).to.deep.equal({ level: 5, inventory: ['axe'] });
    expect(await stored(102)).to.deep.equal({ coins: 100, level: 1, inventory: [] });
    expect([setsFor(101), setsFor(102)]).to.deep.equal([2, 2]);

    await vm.run('game:GetService("Players").__join(103); game.__close(); game:GetService("Players").__leave(103)');
    expect(await stored(103)).to.deep.equal({ level: 1, inventory: [] });
    expect(setsFor(103), 'saved once, not again on leave after close').to.equal(2);
    expect(await vm.run('return #WARNINGS, #ERRORS')).to.deep.equal([0, 0]);
  });

  it('a player whose data cannot be loaded gets no session, so nothing is saved over it', async () => {
    await t.redis.hset(keys.player(ws.workspaceId, '105'), 'broken', 'not an entry');
    await vm.run(
      withPlaceholders(SERVER_SCRIPT, { 'https://pds.example.com/api/v1': t.service.baseUrl, YOUR_API_KEY: ws.apiKey }),
    );
    const [errors, first] = await vm.run(`
      local Players = game:GetService("Players")
      Players.__join(105)
      Players.__leave(105)
      return #ERRORS, ERRORS[1]`);
    expect([errors, first]).to.deep.equal([1, 'PlayerData.getAll: HTTP 500: Internal server error']);
    expect(setsFor(105)).to.equal(0);
  });

  it('a failed purchase increment is not granted, and is warned about', async () => {
    await call(t.service, 'POST', '/data/set', { key: ws.apiKey, body: { userId: 104, key: 'coins', value: 'not a number' } });
    await vm.run(
      withPlaceholders(SERVER_SCRIPT, { 'https://pds.example.com/api/v1': t.service.baseUrl, YOUR_API_KEY: ws.apiKey }),
    );
    const [decision, warning] = await vm.run(`
      local decision = game:GetService("MarketplaceService").ProcessReceipt({ PlayerId = 104, ProductId = 1234567 })
      return decision, WARNINGS[1]`);
    expect(decision).to.equal('NotProcessedYet');
    expect(warning).to.match(/^PlayerData\.increment: HTTP 409: /);
  });

  describe('the increment retry helper', () => {
    const helper = () => `${RETRY_HELPER}\nreturn incrementWithRetry(...)`;

    it('returns the new value, and gives up at once on a 4xx', async () => {
      await vm.run('local baseUrl, apiKey = ...; PlayerData.init({ baseUrl = baseUrl, apiKey = apiKey })', t.service.baseUrl, ws.apiKey);
      expect(await vm.run(helper(), 201, 'coins', 5)).to.deep.equal([5]);
      await vm.run('PlayerData.set(201, "name", "Ann")');
      const before = vm.requests.length;
      const [ok, err] = await vm.run(`local ok, err = pcall(function(...) ${helper()} end, ...) return ok, err`, 201, 'name', 1);
      expect(ok).to.equal(false);
      expect(err).to.match(/^PlayerData\.increment: HTTP 409: /);
      expect(vm.requests.length - before).to.equal(1);
    });

    it('tries three times when no answer arrives, then raises the last error', async () => {
      const doomed = await startTestService();
      await vm.run('local baseUrl, apiKey = ...; PlayerData.init({ baseUrl = baseUrl, apiKey = apiKey })', doomed.baseUrl, ws.apiKey);
      await doomed.close();
      const before = vm.requests.length;
      const [ok, err] = await vm.run(`local ok, err = pcall(function(...) ${helper()} end, ...) return ok, err`, 202, 'coins', 1);
      expect(ok).to.equal(false);
      expect(err).to.match(/^PlayerData\.increment: request failed: HttpError: ConnectFail/);
      expect(vm.requests.length - before).to.equal(3);
    });
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
