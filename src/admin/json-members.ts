// The members of a JSON object in the order they are written, with the raw text of each value.
// JSON.parse loses both: objects list integer-like keys first, and numbers come back as doubles
// (an increment stores `1e-07`, which JavaScript prints `1e-7`). An import needs the order (a
// player's keys are read back in the order they were written) and the exact text (answers must
// be the same bytes). Only ever given text that JSON.parse has accepted, so it need not validate.

export interface Member {
  /** The key, unescaped. */
  readonly key: string;
  /** Where the value's text starts and ends (exclusive) in the source. */
  readonly start: number;
  readonly end: number;
}

function skipSpace(s: string, i: number): number {
  for (;;) {
    const c = s.charCodeAt(i);
    if (c !== 0x20 && c !== 0x09 && c !== 0x0a && c !== 0x0d) return i;
    i++;
  }
}

function skipString(s: string, i: number): number {
  for (i++; ; i++) {
    const c = s.charCodeAt(i);
    if (c === 0x5c) i++;
    else if (c === 0x22) return i + 1;
  }
}

/** The end (exclusive) of the value that starts at `i`. */
export function skipValue(s: string, i: number): number {
  const first = s.charCodeAt(i);
  if (first === 0x22) return skipString(s, i);
  if (first === 0x7b || first === 0x5b) {
    let depth = 0;
    do {
      const c = s.charCodeAt(i);
      if (c === 0x22) {
        i = skipString(s, i);
        continue;
      }
      if (c === 0x7b || c === 0x5b) depth++;
      else if (c === 0x7d || c === 0x5d) depth--;
      i++;
    } while (depth > 0);
    return i;
  }
  // A number, true, false or null: up to the next delimiter.
  while (i < s.length) {
    const c = s.charCodeAt(i);
    if (c === 0x2c || c === 0x7d || c === 0x5d || c === 0x20 || c === 0x09 || c === 0x0a || c === 0x0d) break;
    i++;
  }
  return i;
}

/** The members of the object whose `{` is at `start` (after any space). */
export function members(s: string, start: number): Member[] {
  const out: Member[] = [];
  let i = skipSpace(s, start) + 1;
  i = skipSpace(s, i);
  if (s.charCodeAt(i) === 0x7d) return out;
  for (;;) {
    const keyEnd = skipString(s, i);
    const key = JSON.parse(s.slice(i, keyEnd)) as string;
    i = skipSpace(s, skipSpace(s, keyEnd) + 1);
    const end = skipValue(s, i);
    out.push({ key, start: i, end });
    i = skipSpace(s, end);
    if (s.charCodeAt(i) !== 0x2c) return out;
    i = skipSpace(s, i + 1);
  }
}
