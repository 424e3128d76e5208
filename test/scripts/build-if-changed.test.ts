// The quick start rebuilds only when what the build reads changed: content, not times.
import { mkdirSync, mkdtempSync, rmSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect } from 'chai';
import { buildNeeded, sourceHash, stampFile } from '../../scripts/build-if-changed.js';

describe('scripts/build-if-changed', () => {
  let root: string;
  beforeEach(() => {
    root = mkdtempSync(join(tmpdir(), 'pds-build-'));
    mkdirSync(join(root, 'src', 'store'), { recursive: true });
    mkdirSync(join(root, 'console', 'node_modules'), { recursive: true });
    writeFileSync(join(root, 'src', 'store', 'a.ts'), 'export const a = 1;\n');
    writeFileSync(join(root, 'console', 'page.ts'), 'export {};\n');
    writeFileSync(join(root, 'package.json'), '{}\n');
  });
  afterEach(() => rmSync(root, { recursive: true, force: true }));

  const built = () => {
    mkdirSync(join(root, 'dist'), { recursive: true });
    writeFileSync(join(root, 'dist', 'main.js'), '');
    writeFileSync(stampFile(root), `${sourceHash(root)}\n`);
  };

  it('builds when there is no build, or no record of its sources', () => {
    expect(buildNeeded(root)).to.equal(true);
    mkdirSync(join(root, 'dist'));
    writeFileSync(join(root, 'dist', 'main.js'), '');
    expect(buildNeeded(root)).to.equal(true);
  });

  it('does not build again from the same sources, even touched', () => {
    built();
    expect(buildNeeded(root)).to.equal(false);
    const later = new Date(Date.now() + 60_000);
    utimesSync(join(root, 'src', 'store', 'a.ts'), later, later);
    expect(buildNeeded(root)).to.equal(false);
  });

  it('builds again when a source, a new file, a config file or a console file changed', () => {
    for (const change of [
      () => writeFileSync(join(root, 'src', 'store', 'a.ts'), 'export const a = 2;\n'),
      () => writeFileSync(join(root, 'src', 'b.ts'), ''),
      () => writeFileSync(join(root, 'package.json'), '{"x":1}\n'),
      () => writeFileSync(join(root, 'console', 'page.ts'), 'export const p = 1;\n'),
    ]) {
      built();
      change();
      expect(buildNeeded(root)).to.equal(true);
    }
  });

  it('ignores node_modules under the inputs', () => {
    built();
    writeFileSync(join(root, 'console', 'node_modules', 'x.js'), '');
    expect(buildNeeded(root)).to.equal(false);
  });
});
