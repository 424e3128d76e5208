// The shape of the ids that end up inside Redis key names. Neither may contain braces (they
// would break the cluster hash tag), colons or glob characters (they would break SCAN patterns).

/** Workspace ids: what we generate (`ws_` + base62) and what an operator may pass in. */
export const WORKSPACE_ID_PATTERN = /^[A-Za-z0-9_-]{1,64}$/;

export const USER_ID_PATTERN_SOURCE = '^[A-Za-z0-9_.-]{1,64}$';
const USER_ID_PATTERN = new RegExp(USER_ID_PATTERN_SOURCE);

/**
 * The player's id as stored: a non-negative safe integer becomes its decimal string, so the
 * number 42 and the string "42" are the same player. Returns undefined for anything else.
 */
export function normalizeUserId(raw: unknown): string | undefined {
  if (typeof raw === 'number') {
    return Number.isSafeInteger(raw) && raw >= 0 ? String(raw) : undefined;
  }
  if (typeof raw === 'string' && USER_ID_PATTERN.test(raw)) return raw;
  return undefined;
}

export function isWorkspaceId(raw: string): boolean {
  return WORKSPACE_ID_PATTERN.test(raw);
}
