// Splits a byte stream into NDJSON lines without ever holding more than one line (up to a
// limit): a line longer than `maxLineBytes` is skipped to its end and reported, not buffered.
// Line numbers count from 1 and include blank lines, so they match what an editor shows.

export type Line =
  | { readonly number: number; readonly text: string }
  | { readonly number: number; readonly tooLong: number };

export async function* ndjsonLines(source: AsyncIterable<Buffer | string>, maxLineBytes: number): AsyncGenerator<Line> {
  let parts: Buffer[] = [];
  let held = 0;
  let skipped = 0; // bytes of a too-long line dropped so far
  let number = 0;
  const finish = function* (): Generator<Line> {
    number++;
    if (skipped > 0) {
      yield { number, tooLong: skipped + held };
    } else {
      let text = Buffer.concat(parts, held).toString('utf8');
      if (text.endsWith('\r')) text = text.slice(0, -1);
      if (text.trim() !== '') yield { number, text };
    }
    parts = [];
    held = 0;
    skipped = 0;
  };
  for await (const chunk of source) {
    const buf = typeof chunk === 'string' ? Buffer.from(chunk) : chunk;
    let start = 0;
    while (start < buf.length) {
      const nl = buf.indexOf(0x0a, start);
      const end = nl === -1 ? buf.length : nl;
      const piece = buf.subarray(start, end);
      if (skipped > 0 || held + piece.length > maxLineBytes) {
        skipped += held + piece.length;
        parts = [];
        held = 0;
      } else if (piece.length > 0) {
        // A copy: the source may reuse its chunk's memory.
        parts.push(Buffer.from(piece));
        held += piece.length;
      }
      if (nl === -1) break;
      yield* finish();
      start = nl + 1;
    }
  }
  if (held > 0 || skipped > 0) yield* finish();
}
