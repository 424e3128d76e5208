// Files written where an operator says (`workspace export --out`, `export --all`, an upload's
// spool): each is created new, never opened through what already lies at its name. A name that
// exists, a symbolic link planted there by another local user included, is refused (EEXIST,
// ELOOP) instead of being followed and overwritten: O_CREAT|O_EXCL, and O_NOFOLLOW where the
// platform has it. A file written whole before it appears under its name goes through a
// temporary name with a random part (so it cannot be guessed ahead and planted), then a rename,
// which replaces a link at the target rather than writing through it.
import { randomBytes } from 'node:crypto';
import { constants, type WriteStream } from 'node:fs';
import { open, rename, rm } from 'node:fs/promises';

const NEW_FILE = constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | (constants.O_NOFOLLOW ?? 0);

/** A write stream on a file created by this call; rejects when anything exists at `path`. */
export async function createNewFileStream(path: string): Promise<WriteStream> {
  const handle = await open(path, NEW_FILE, 0o666);
  return handle.createWriteStream();
}

/** `path` plus a random part and `.partial`: where a file is written before its rename. */
export function temporaryNameFor(path: string): string {
  return `${path}.${randomBytes(8).toString('hex')}.partial`;
}

/**
 * Writes `path` whole or not at all: `write` fills a new temporary file beside it, which is
 * renamed to `path` once `write` resolves, and removed if it rejects.
 */
export async function writeWhole(path: string, write: (out: WriteStream) => Promise<void>): Promise<void> {
  const temporary = temporaryNameFor(path);
  const out = await createNewFileStream(temporary);
  try {
    await write(out);
    await rename(temporary, path);
  } catch (err) {
    out.destroy();
    await rm(temporary, { force: true });
    throw err;
  }
}
