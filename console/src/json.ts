// JSON for people: where a text stops being JSON (line, column, what was expected), the text cut
// into coloured tokens, paths into a value, and the difference between two values. No library:
// a JSON checker that knows the error's place is small, and the editor needs nothing more.

export interface JsonProblem {
  /** Offset of the first character that is wrong (the text's length when it ends too soon). */
  readonly offset: number;
  readonly line: number;
  readonly column: number;
  readonly message: string;
}

class Stop extends Error {
  constructor(
    readonly offset: number,
    message: string,
  ) {
    super(message);
  }
}

/** Where `text` stops being JSON, or undefined when it is JSON (one value, whitespace around). */
export function jsonProblem(text: string): JsonProblem | undefined {
  let i = 0;
  const ws = () => {
    while (i < text.length && ' \t\n\r'.includes(text[i]!)) i++;
  };
  const fail = (what: string): never => {
    const found = i >= text.length ? 'the end' : `"${text[i]}"`;
    throw new Stop(i, `expected ${what}, found ${found}`);
  };
  const literal = (word: string) => {
    if (text.startsWith(word, i)) i += word.length;
    else fail(`"${word}"`);
  };
  const string = () => {
    i++;
    while (i < text.length && text[i] !== '"') {
      const c = text.charCodeAt(i);
      if (c < 0x20) throw new Stop(i, 'a control character (such as a line break) inside a string: write it as \\n');
      if (text[i] === '\\') {
        i++;
        if (text[i] === 'u') {
          if (!/^[0-9a-fA-F]{4}$/.test(text.slice(i + 1, i + 5))) throw new Stop(i, 'expected 4 hex digits after \\u');
          i += 4;
        } else if (!'"\\/bfnrt'.includes(text[i] ?? '')) throw new Stop(i, 'an unknown escape: use \\" \\\\ \\/ \\b \\f \\n \\r \\t or \\uXXXX');
      }
      i++;
    }
    if (i >= text.length) throw new Stop(i, 'the string is not closed: expected "');
    i++;
  };
  const number = () => {
    const m = /^-?(0|[1-9]\d*)(\.\d+)?([eE][+-]?\d+)?/.exec(text.slice(i));
    if (!m || m[0] === '-' || m[0] === '') fail('a value');
    i += m![0].length;
  };
  const value = (depth: number): void => {
    if (depth > 200) throw new Stop(i, 'nested too deep');
    ws();
    const c = text[i];
    if (c === '{') {
      i++;
      ws();
      if (text[i] === '}') {
        i++;
        return;
      }
      for (;;) {
        ws();
        if (text[i] !== '"') fail('a key in double quotes');
        string();
        ws();
        if (text[i] !== ':') fail('":"');
        i++;
        value(depth + 1);
        ws();
        if (text[i] === ',') {
          i++;
          continue;
        }
        if (text[i] === '}') {
          i++;
          return;
        }
        fail('"," or "}"');
      }
    }
    if (c === '[') {
      i++;
      ws();
      if (text[i] === ']') {
        i++;
        return;
      }
      for (;;) {
        value(depth + 1);
        ws();
        if (text[i] === ',') {
          i++;
          continue;
        }
        if (text[i] === ']') {
          i++;
          return;
        }
        fail('"," or "]"');
      }
    }
    if (c === '"') return string();
    if (c === 't') return literal('true');
    if (c === 'f') return literal('false');
    if (c === 'n') return literal('null');
    number();
  };
  try {
    value(0);
    ws();
    if (i < text.length) fail('the end of the value');
    return undefined;
  } catch (err) {
    if (!(err instanceof Stop)) throw err;
    const before = text.slice(0, err.offset);
    const line = before.split('\n').length;
    const column = err.offset - before.lastIndexOf('\n');
    return { offset: err.offset, line, column, message: err.message };
  }
}

export type TokenKind = 'key' | 'string' | 'number' | 'literal' | 'punct' | 'space' | 'other';

/** The text cut into tokens for colouring (also text that is not JSON: it is cut as far as it goes). */
export function tokens(text: string): Array<{ kind: TokenKind; text: string }> {
  const out: Array<{ kind: TokenKind; text: string }> = [];
  const re = /("(?:[^"\\\n]|\\.)*"?)(\s*:)?|(-?\d+(?:\.\d+)?(?:[eE][+-]?\d+)?)|(true|false|null)|([{}[\],:])|(\s+)|(.)/gy;
  for (let m = re.exec(text); m && m[0] !== ''; m = re.exec(text)) {
    if (m[1] !== undefined) {
      out.push({ kind: m[2] ? 'key' : 'string', text: m[1] });
      if (m[2]) out.push({ kind: 'punct', text: m[2] });
    } else if (m[3] !== undefined) out.push({ kind: 'number', text: m[3] });
    else if (m[4] !== undefined) out.push({ kind: 'literal', text: m[4] });
    else if (m[5] !== undefined) out.push({ kind: 'punct', text: m[5] });
    else if (m[6] !== undefined) out.push({ kind: 'space', text: m[6] });
    else out.push({ kind: 'other', text: m[0] });
  }
  return out;
}

/** A path into a value as a person types it in code: `inventory.potions[1]`, `["odd key"]`. */
export function pathText(path: ReadonlyArray<string | number>): string {
  return path
    .map((p, i) =>
      typeof p === 'number' ? `[${p}]` : /^[A-Za-z_$][\w$]*$/.test(p) ? `${i === 0 ? '' : '.'}${p}` : `[${JSON.stringify(p)}]`,
    )
    .join('');
}

export interface Change {
  readonly path: ReadonlyArray<string | number>;
  readonly kind: 'added' | 'removed' | 'changed';
  readonly now?: unknown;
  readonly then?: unknown;
}

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/**
 * What turns `now` into `then`, as the smallest paths that differ (objects compared key by key,
 * arrays of the same length item by item), at most `max` of them.
 */
export function changes(now: unknown, then: unknown, max = 200, path: Array<string | number> = [], out: Change[] = []): Change[] {
  if (out.length >= max) return out;
  if (isObject(now) && isObject(then)) {
    const names = [...new Set([...Object.keys(now), ...Object.keys(then)])].sort();
    for (const k of names) {
      if (!Object.hasOwn(then, k)) out.push({ path: [...path, k], kind: 'removed', now: now[k] });
      else if (!Object.hasOwn(now, k)) out.push({ path: [...path, k], kind: 'added', then: then[k] });
      else changes(now[k], then[k], max, [...path, k], out);
      if (out.length >= max) break;
    }
    return out;
  }
  if (Array.isArray(now) && Array.isArray(then) && now.length === then.length) {
    now.forEach((item, i) => changes(item, then[i], max, [...path, i], out));
    return out;
  }
  if (JSON.stringify(now) !== JSON.stringify(then)) out.push({ path, kind: 'changed', now, then });
  return out;
}
