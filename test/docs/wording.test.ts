// The README and docs/ describe the service as it is: the log of runs ("this pass", the hour of a
// run) belongs in bench/RESULTS.md, and no page sends the reader to a file the repository does
// not have (the spec the service was first built from is not in it).
import { expect } from 'chai';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const PAGES = ['README.md', ...readdirSync(join(ROOT, 'docs')).filter((f) => f.endsWith('.md')).map((f) => `docs/${f}`)];
const FORBIDDEN: ReadonlyArray<readonly [RegExp, string]> = [
  [/\bthis pass\b|\bprevious pass\b/i, 'a log of work passes'],
  [/\b\d{1,2}:\d\d(-\d{1,2}:\d\d)? UTC\b/, 'the hour of a run'],
  [/\bspec, section\b|\bthe spec\b/i, 'a spec the repository does not have'],
];

describe('wording of the README and docs/', () => {
  for (const page of PAGES) {
    it(`${page}: no log of runs, no reference to a missing spec`, () => {
      const lines = readFileSync(join(ROOT, page), 'utf8').split('\n');
      const found: string[] = [];
      lines.forEach((line, i) => {
        for (const [pattern, what] of FORBIDDEN) if (pattern.test(line)) found.push(`${page}:${i + 1}: ${what}: ${line.trim()}`);
      });
      expect(found).to.deep.equal([]);
    });
  }
});
