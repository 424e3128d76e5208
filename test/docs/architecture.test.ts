// docs/architecture.md says which folder owns what: every folder of src/ (and the repository's
// top-level code folders) has its row, and every folder a row names exists.
import { expect } from 'chai';
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));

describe('docs/architecture.md', () => {
  const doc = readFileSync(join(ROOT, 'docs/architecture.md'), 'utf8');
  const start = doc.indexOf('\n## Who owns what\n');
  const table = doc.slice(start, doc.indexOf('\n## ', start + 1));
  const rows = [...table.matchAll(/^\| (.+?) \|/gm)].map((m) => m[1]!);
  const named = rows.flatMap((cell) => [...cell.matchAll(/`([^`]+)`/g)].map((m) => m[1]!));

  it('has a row for every folder of src/ and every code folder of the repository', () => {
    expect(start).to.be.greaterThan(-1);
    const folders = [
      ...readdirSync(join(ROOT, 'src')).filter((f) => statSync(join(ROOT, 'src', f)).isDirectory()).map((f) => `src/${f}/`),
      'lua/', 'clients/', 'console/', 'bench/', 'test/',
    ];
    expect(folders.filter((f) => !named.includes(f))).to.deep.equal([]);
  });

  it('names only folders and files that exist', () => {
    expect(named.filter((path) => !existsSync(join(ROOT, path)))).to.deep.equal([]);
  });
});
