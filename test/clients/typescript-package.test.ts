// The TypeScript client as a user gets it: packed with `npm pack` (which builds it: an ES module
// build and a CommonJS build), installed from the tarball into a fresh project (offline: the
// package has no dependencies), then used from `import` and from `require` against the real
// service, and type-checked from an .mts and a .cts file. The CommonJS build must work without
// require(esm), which Node 20 before 20.19 lacks and which prints a warning on some versions.
import { execFile } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { fileURLToPath } from 'node:url';
import { expect } from 'chai';
import type { CreatedWorkspace } from '../../src/admin/operations.js';
import { newWorkspace, useService } from '../support/service.js';

const run = promisify(execFile);
const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const CLIENT_DIR = join(ROOT, 'clients/typescript');
const NAME = '@player-data-service/client';

/** What each consumer script prints: the workspace from a ping, and the error of a bad key. */
const USE = `
  const { client, workspace } = await PlayerDataClient.connect({ baseUrl: process.env.PDS_URL, apiKey: process.env.PDS_API_KEY });
  await client.set(7, 'format', FORMAT);
  const stored = await client.get(7, 'format');
  let refused;
  try {
    await new PlayerDataClient({ baseUrl: process.env.PDS_URL, apiKey: 'pds_' + 'x'.repeat(40) }).ping();
  } catch (err) {
    refused = { isPlayerDataError: err instanceof PlayerDataError, code: err.code, status: err.status };
  }
  console.log(JSON.stringify({ workspace, stored, refused, moduleLevelInit: typeof init }));
`;

describe('TypeScript client package (npm pack, installed into a fresh project)', function () {
  // npm pack builds the package (two tsc runs), then npm installs the tarball.
  this.timeout(180_000);
  const t = useService();
  let ws: CreatedWorkspace;
  let dir: string;
  let project: string;
  let packed: { filename: string; files: Array<{ path: string }> };

  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'pds-client-pack-'));
    const { stdout } = await run('npm', ['pack', '--json', '--pack-destination', dir], { cwd: CLIENT_DIR, maxBuffer: 16 * 1024 * 1024 });
    // npm prints the build's own output before the JSON.
    packed = JSON.parse(stdout.slice(stdout.indexOf('[\n')))[0];
    project = join(dir, 'consumer');
    mkdirSync(project);
    writeFileSync(join(project, 'package.json'), JSON.stringify({ name: 'consumer', version: '1.0.0', private: true }));
    await run('npm', ['install', '--offline', '--no-audit', '--no-fund', '--loglevel=error', join(dir, packed.filename)], { cwd: project });
    ws = await newWorkspace(t.redis, 'pro', 'Packed Client');
  });
  after(() => {
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  const env = () => ({ ...process.env, PDS_URL: t.service.baseUrl, PDS_API_KEY: ws.apiKey });

  it('packs both builds, their types, the README and the sources the source maps point to, and nothing else', () => {
    const files = packed.files.map((f) => f.path).sort();
    for (const needed of [
      'package.json',
      'README.md',
      'dist/esm/index.js',
      'dist/esm/index.d.ts',
      'dist/cjs/index.js',
      'dist/cjs/index.d.ts',
      'dist/cjs/package.json',
      'src/index.ts',
    ]) {
      expect(files, needed).to.include(needed);
    }
    expect(files.filter((f) => !/^(dist\/(esm|cjs)\/|src\/)/.test(f))).to.deep.equal(['README.md', 'package.json']);
  });

  it('works from import (the ES module build)', async () => {
    const file = join(project, 'use.mjs');
    writeFileSync(file, `import { PlayerDataClient, PlayerDataError, init } from '${NAME}';\nconst FORMAT = 'esm';\n${USE}`);
    const resolved = await run(process.execPath, ['--input-type=module', '-e', `console.log(import.meta.resolve('${NAME}'))`], { cwd: project });
    expect(resolved.stdout.trim()).to.match(/\/node_modules\/@player-data-service\/client\/dist\/esm\/index\.js$/);
    const out = JSON.parse((await run(process.execPath, [file], { cwd: project, env: env() })).stdout);
    expect(out).to.deep.equal({
      workspace: { workspaceId: ws.workspaceId, workspaceName: 'Packed Client', plan: 'pro' },
      stored: 'esm',
      refused: { isPlayerDataError: true, code: 'UNAUTHORIZED', status: 401 },
      moduleLevelInit: 'function',
    });
  });

  it('works from require (the CommonJS build, without require(esm))', async () => {
    const file = join(project, 'use.cjs');
    writeFileSync(file, `const { PlayerDataClient, PlayerDataError, init } = require('${NAME}');\nconst FORMAT = 'cjs';\n(async () => {${USE}})();`);
    // Where Node has require(esm), turn it off: the package must not depend on it.
    const flags = process.allowedNodeEnvironmentFlags.has('--no-experimental-require-module') ? ['--no-experimental-require-module'] : [];
    const resolved = await run(process.execPath, [...flags, '-e', `console.log(require.resolve('${NAME}'))`], { cwd: project });
    expect(resolved.stdout.trim()).to.match(/\/node_modules\/@player-data-service\/client\/dist\/cjs\/index\.js$/);
    const { stdout, stderr } = await run(process.execPath, [...flags, file], { cwd: project, env: env() });
    expect(stderr, 'no ExperimentalWarning or other noise').to.equal('');
    expect(JSON.parse(stdout)).to.deep.include({ stored: 'cjs', refused: { isPlayerDataError: true, code: 'UNAUTHORIZED', status: 401 } });
  });

  it('type-checks from an ES module and from a CommonJS TypeScript file (module nodenext)', async () => {
    const body = (importLine: string) => `${importLine}
const client: PlayerDataClient = new PlayerDataClient({ baseUrl: 'http://localhost', apiKey: 'k' });
export async function level(): Promise<number | undefined> {
  try {
    return await client.get<number>(1, 'level');
  } catch (err) {
    if (err instanceof PlayerDataError && err.code === 'VERSION_CONFLICT') return err.version;
    throw err;
  }
}
const value: Value = { inventory: ['sword'] };
export { value };
`;
    writeFileSync(join(project, 'check.mts'), body(`import { PlayerDataClient, PlayerDataError, type Value } from '${NAME}';`));
    writeFileSync(join(project, 'check.cts'), body(`import { PlayerDataClient, PlayerDataError, type Value } from '${NAME}';`));
    writeFileSync(
      join(project, 'tsconfig.json'),
      JSON.stringify({
        compilerOptions: {
          module: 'nodenext',
          moduleResolution: 'nodenext',
          target: 'es2022',
          strict: true,
          noEmit: true,
          types: ['node'],
          typeRoots: [join(ROOT, 'node_modules/@types')],
        },
        files: ['check.mts', 'check.cts'],
      }),
    );
    const tsc = join(ROOT, 'node_modules/typescript/bin/tsc');
    const result = await run(process.execPath, [tsc, '-p', 'tsconfig.json', '--traceResolution'], { cwd: project, maxBuffer: 64 * 1024 * 1024 }).catch(
      (err: { stdout: string }) => expect.fail(`tsc failed:\n${err.stdout.split('\n').filter((l) => l.includes('error')).join('\n')}`),
    );
    // Each file's import found the declarations of its own build.
    expect(result.stdout).to.match(/'@player-data-service\/client' was successfully resolved to '[^']*\/dist\/esm\/index\.d\.ts'/);
    expect(result.stdout).to.match(/'@player-data-service\/client' was successfully resolved to '[^']*\/dist\/cjs\/index\.d\.ts'/);
  });
});
