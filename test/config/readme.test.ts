import { expect } from 'chai';
import { readFileSync } from 'node:fs';

const read = (path: string) => readFileSync(new URL(`../../${path}`, import.meta.url), 'utf8');

describe('README configuration table', () => {
  it('lists every variable src/config.ts reads, and no other', () => {
    const source = read('src/config.ts');
    // Every read goes through a helper called with (env, 'NAME', ...) or env['NAME'].
    const read_ = new Set([...source.matchAll(/\(env, '([A-Z][A-Z0-9_]*)'|env\['([A-Z][A-Z0-9_]*)'\]/g)].map((m) => m[1] ?? m[2]));
    const readme = read('README.md');
    const section = readme.slice(readme.indexOf('## Configuration'), readme.indexOf('\n## ', readme.indexOf('## Configuration') + 1));
    const listed = new Set([...section.matchAll(/^\| `([A-Z][A-Z0-9_]*)` \|/gm)].map((m) => m[1]));
    expect(read_.size).to.be.greaterThan(10);
    expect([...listed].sort()).to.deep.equal([...read_].sort());
  });
});
