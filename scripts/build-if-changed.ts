// Runs `npm run build` only when what it builds from changed since the last build: the quick
// start's restarts took 27-51 s of rebuilding each. The inputs (src/, console/, the tsconfig
// files, package.json and its lock) are hashed by path and content, and the hash is kept in
// dist/.source-hash once a build has passed; a missing or different hash, or a missing
// dist/main.js, builds again. Content, not modification times: a checkout of older files
// rebuilds, a touched but unchanged file does not.
//
//   tsx scripts/build-if-changed.ts [root]   exit status of the build, or 0 when it was not needed
import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const INPUT_FOLDERS = ['src', 'console'];
const INPUT_FILES = ['package.json', 'package-lock.json', 'tsconfig.json', 'tsconfig.build.json'];

function filesUnder(dir: string): string[] {
  if (!existsSync(dir)) return [];
  return readdirSync(dir, { withFileTypes: true })
    .filter((entry) => entry.name !== 'node_modules')
    .flatMap((entry) => (entry.isDirectory() ? filesUnder(join(dir, entry.name)) : [join(dir, entry.name)]));
}

/** The hash of every input's path and content, in a fixed order. */
export function sourceHash(root: string): string {
  const hash = createHash('sha256');
  const files = [...INPUT_FOLDERS.flatMap((folder) => filesUnder(join(root, folder))), ...INPUT_FILES.map((f) => join(root, f)).filter((f) => existsSync(f))];
  for (const file of files.map((f) => relative(root, f)).sort()) {
    hash.update(`${file}\0`);
    hash.update(readFileSync(join(root, file)));
    hash.update('\0');
  }
  return hash.digest('hex');
}

export const stampFile = (root: string) => join(root, 'dist', '.source-hash');

/** Whether the build in dist/ is missing or was made from other sources. */
export function buildNeeded(root: string): boolean {
  if (!existsSync(join(root, 'dist', 'main.js')) || !existsSync(stampFile(root))) return true;
  return readFileSync(stampFile(root), 'utf8').trim() !== sourceHash(root);
}

function main(): number {
  const root = resolve(process.argv[2] ?? fileURLToPath(new URL('..', import.meta.url)));
  if (!buildNeeded(root)) {
    process.stderr.write('build: dist/ is up to date with the sources, not rebuilt\n');
    return 0;
  }
  const before = sourceHash(root);
  const run = spawnSync('npm', ['run', 'build'], { cwd: root, stdio: 'inherit' });
  if (run.status !== 0) return run.status ?? 1;
  writeFileSync(stampFile(root), `${before}\n`);
  return 0;
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) process.exit(main());
