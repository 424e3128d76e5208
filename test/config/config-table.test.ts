// One table per setting: every environment variable src/config.ts reads is described in exactly
// one row of the configuration table in docs/operations.md, that table names nothing config.ts
// does not read, and no other table of the README or docs/ describes a variable in a row of its
// own (tables of limits may name a setting in a column, not be a second description of it).
import { expect } from 'chai';
import { readdirSync, readFileSync } from 'node:fs';

const read = (path: string) => readFileSync(new URL(`../../${path}`, import.meta.url), 'utf8');
const ROW = /^\| `([A-Z][A-Z0-9_]*)` \|/gm;

function variablesConfigReads(): Set<string> {
  const source = read('src/config.ts');
  // Every read goes through a helper called with (env, 'NAME', ...) or env['NAME'].
  return new Set([...source.matchAll(/\(env, '([A-Z][A-Z0-9_]*)'|env\['([A-Z][A-Z0-9_]*)'\]/g)].map((m) => m[1] ?? m[2]!));
}

function configurationTable(): string[] {
  const doc = read('docs/operations.md');
  const start = doc.indexOf('\n## Configuration\n');
  expect(start, 'docs/operations.md has a "## Configuration" section').to.be.greaterThan(-1);
  const section = doc.slice(start, doc.indexOf('\n## ', start + 1));
  return [...section.matchAll(ROW)].map((m) => m[1]!);
}

describe('the configuration table (docs/operations.md)', () => {
  it('lists every variable src/config.ts reads, once each, and no other', () => {
    const read_ = variablesConfigReads();
    const listed = configurationTable();
    expect(read_.size).to.be.greaterThan(10);
    const twice = listed.filter((name, i) => listed.indexOf(name) !== i);
    expect(twice, 'variables with two rows').to.deep.equal([]);
    expect([...listed].sort()).to.deep.equal([...read_].sort());
  });

  it('is the only table with a row of its own for a variable', () => {
    const read_ = variablesConfigReads();
    const pages = ['README.md', ...readdirSync(new URL('../../docs/', import.meta.url)).filter((f) => f.endsWith('.md')).map((f) => `docs/${f}`)];
    const elsewhere: string[] = [];
    for (const page of pages) {
      let text = read(page);
      if (page === 'docs/operations.md') {
        const start = text.indexOf('\n## Configuration\n');
        const end = text.indexOf('\n## ', start + 1);
        text = text.slice(0, start) + text.slice(end);
      }
      for (const m of text.matchAll(ROW)) if (read_.has(m[1]!)) elsewhere.push(`${page}: ${m[1]}`);
    }
    expect(elsewhere, 'describe these in docs/operations.md only').to.deep.equal([]);
  });
});
