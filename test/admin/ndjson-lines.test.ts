// The NDJSON splitter: lines cut across chunks, CRLF, blank lines counted but not given, a
// multi-byte character split between chunks, and a too-long line skipped whole, not held.
import { expect } from 'chai';
import { ndjsonLines, type Line } from '../../src/admin/ndjson-lines.js';

async function split(chunks: Array<string | Buffer>, max = 100): Promise<Line[]> {
  const out: Line[] = [];
  async function* source() {
    for (const c of chunks) yield typeof c === 'string' ? Buffer.from(c) : c;
  }
  for await (const line of ndjsonLines(source(), max)) out.push(line);
  return out;
}

describe('admin/ndjson-lines', () => {
  it('numbers lines as an editor does, across chunks, CRLF and blank lines included', async () => {
    expect(await split(['{"a"', ':1}\r\n\n', '  \n{"b":2}'])).to.deep.equal([
      { number: 1, text: '{"a":1}' },
      { number: 4, text: '{"b":2}' },
    ]);
  });

  it('joins a multi-byte character split between chunks', async () => {
    const bytes = Buffer.from('"é"\n');
    expect(await split([bytes.subarray(0, 2), bytes.subarray(2)])).to.deep.equal([{ number: 1, text: '"é"' }]);
  });

  it('reports a line over the limit with its size and goes on with the next', async () => {
    expect(await split(['x'.repeat(60), 'y'.repeat(60), '\nok\n', 'z'.repeat(150)], 100)).to.deep.equal([
      { number: 1, tooLong: 120 },
      { number: 2, text: 'ok' },
      { number: 3, tooLong: 150 },
    ]);
  });
});
