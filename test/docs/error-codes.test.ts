// The error-code table of docs/safe-saves.md is src/errors.ts's, code and status, both ways: a
// code added to the service without a row (or a row left behind) fails here.
import { readFileSync } from 'node:fs';
import { expect } from 'chai';
import { ErrorCode, STATUS_OF } from '../../src/errors.js';

describe('docs/safe-saves.md: the error codes', () => {
  const doc = readFileSync(new URL('../../docs/safe-saves.md', import.meta.url), 'utf8');
  const start = doc.indexOf('\n## Error codes\n');
  const section = doc.slice(start, doc.indexOf('\n## ', start + 1));
  const rows = new Map([...section.matchAll(/^\| `([A-Z_]+)` \| (\d{3}) \|/gm)].map((m) => [m[1]!, Number(m[2])]));

  it('lists every code of src/errors.ts with its status, and no other', () => {
    expect(start).to.be.greaterThan(-1);
    const code = Object.fromEntries(Object.values(ErrorCode).map((c) => [c, STATUS_OF[c]]));
    expect(Object.fromEntries(rows)).to.deep.equal(code);
  });
});
