import { randomBytes } from 'node:crypto';

/** A fresh id for isolating a test's Redis keys (workspace ids, user ids). */
export function randomId(prefix = 't'): string {
  return `${prefix}_${randomBytes(8).toString('hex')}`;
}
