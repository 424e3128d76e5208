// Checks a player value before it is stored: JSON can carry it without loss, and it is not
// nested deeper than the configured limit. Walks iteratively, so no input can overflow the stack.

export function checkValue(value: unknown, maxDepth: number): string | undefined {
  if (value === null || value === undefined) return 'value must not be null';
  const stack: Array<{ v: unknown; depth: number }> = [{ v: value, depth: 1 }];
  while (stack.length > 0) {
    const { v, depth } = stack.pop()!;
    if (typeof v === 'number') {
      if (!Number.isFinite(v)) return 'value contains a number too large to store';
      continue;
    }
    if (v === null || typeof v !== 'object') continue;
    if (depth > maxDepth) return `value is nested deeper than ${maxDepth} levels`;
    const children = Array.isArray(v) ? v : Object.values(v);
    for (const child of children) stack.push({ v: child, depth: depth + 1 });
  }
  return undefined;
}
