// Checks what a player's data and messages hold before they are stored: a value or a message
// JSON can carry without loss, nested no deeper than the configured limit (MAX_VALUE_DEPTH);
// names (data keys, a session's owner, operator-typed names) free of control characters. Walks
// iteratively, so no input can overflow the stack.

/**
 * Unicode's control characters (general category Cc): C0 U+0000-U+001F, DEL U+007F and C1
 * U+0080-U+009F (U+0085 is a line break to some readers), as a character class's inside, for a
 * JSON Schema pattern and a RegExp alike. Every name that refuses control characters uses it.
 */
export const CONTROL_CHARACTERS = '\\u0000-\\u001f\\u007f-\\u009f';
const CONTROL = new RegExp(`[${CONTROL_CHARACTERS}]`);

export function hasControlCharacter(text: string): boolean {
  return CONTROL.test(text);
}

const CONTROL_ALL = new RegExp(`[${CONTROL_CHARACTERS}]`, 'g');

/**
 * `text` with each control character written out as `\uXXXX`: for what a caller sent that is
 * kept and shown to operators (a banned request's user agent), where a C1 character such as
 * U+009B (CSI) printed by the CLI would be read by some terminals as the start of a command.
 */
export function escapeControlCharacters(text: string): string {
  return text.replace(CONTROL_ALL, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);
}

/** Why `value` (a player value: not null) cannot be stored, or undefined. */
export function checkValue(value: unknown, maxDepth: number): string | undefined {
  if (value === null || value === undefined) return 'value must not be null';
  return checkJson(value, maxDepth, 'value');
}

/** Why `message` (any JSON, null too) cannot be left for a player, or undefined: the values' depth limit. */
export function checkMessage(message: unknown, maxDepth: number): string | undefined {
  return checkJson(message, maxDepth, 'message');
}

function checkJson(value: unknown, maxDepth: number, what: string): string | undefined {
  const stack: Array<{ v: unknown; depth: number }> = [{ v: value, depth: 1 }];
  while (stack.length > 0) {
    const { v, depth } = stack.pop()!;
    if (typeof v === 'number') {
      if (!Number.isFinite(v)) return `${what} contains a number too large to store`;
      continue;
    }
    if (v === null || typeof v !== 'object') continue;
    if (depth > maxDepth) return `${what} is nested deeper than ${maxDepth} levels`;
    const children = Array.isArray(v) ? v : Object.values(v);
    for (const child of children) stack.push({ v: child, depth: depth + 1 });
  }
  return undefined;
}
