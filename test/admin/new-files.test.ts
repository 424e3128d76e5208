// Files the CLI and the backup create: never written through a name that already exists,
// a planted symbolic link included, and renamed into place whole.
import { lstatSync, mkdtempSync, readdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pipeline } from 'node:stream/promises';
import { Readable } from 'node:stream';
import { expect } from 'chai';
import { createNewFileStream, temporaryNameFor, writeWhole } from '../../src/admin/new-files.js';

describe('new files of the CLI and the backup', () => {
  let dir: string;
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'pds-new-files-'));
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  it('refuses a name where a link (to a file or to nothing) or a file already is, and changes nothing', async () => {
    const victim = join(dir, 'victim');
    writeFileSync(victim, 'precious');
    symlinkSync(victim, join(dir, 'to-file'));
    symlinkSync(join(dir, 'nowhere'), join(dir, 'dangling'));
    for (const name of ['to-file', 'dangling', 'victim']) {
      let refused: unknown;
      await createNewFileStream(join(dir, name)).catch((err: unknown) => (refused = err));
      expect(refused, name).to.have.property('code').that.is.oneOf(['EEXIST', 'ELOOP']);
    }
    expect(readFileSync(victim, 'utf8')).to.equal('precious');
    expect(readdirSync(dir).sort()).to.deep.equal(['dangling', 'to-file', 'victim']);
  });

  it('writes through a random temporary name and renames it over the target, a link there included', async () => {
    const victim = join(dir, 'victim');
    writeFileSync(victim, 'precious');
    const target = join(dir, 'out.ndjson');
    symlinkSync(victim, target);
    expect(temporaryNameFor(target)).to.match(/^.*out\.ndjson\.[0-9a-f]{16}\.partial$/).and.not.equal(temporaryNameFor(target));
    await writeWhole(target, (out) => pipeline(Readable.from(['a\n', 'b\n']), out));
    expect(lstatSync(target).isSymbolicLink()).to.equal(false);
    expect(readFileSync(target, 'utf8')).to.equal('a\nb\n');
    expect(readFileSync(victim, 'utf8')).to.equal('precious');
    expect(readdirSync(dir).sort()).to.deep.equal(['out.ndjson', 'victim']);
  });

  it('leaves nothing behind when the writing fails', async () => {
    const target = join(dir, 'out.ndjson');
    let failed: unknown;
    await writeWhole(target, async (out) => {
      out.write('half');
      throw new Error('the source broke');
    }).catch((err: unknown) => (failed = err));
    expect(failed).to.have.property('message', 'the source broke');
    expect(readdirSync(dir)).to.deep.equal([]);
  });
});
