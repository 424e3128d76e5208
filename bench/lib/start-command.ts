// How production starts the service: `npm start` in the checkout's package.json. The bench
// runs the service the same way, node's flags included (the young generation's size is one of
// them, and it changes the service's CPU per request).
import { readFileSync } from 'node:fs';
import { join } from 'node:path';

/** Node's flags in `npm start` of the checkout at `root` (`node <flags> dist/main.js`). */
export function startFlags(root: string): string[] {
  const pkg = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as { scripts?: Record<string, string> };
  const start = pkg.scripts?.['start'] ?? '';
  const words = start.trim().split(/\s+/);
  if (words[0] !== 'node' || words.at(-1) !== 'dist/main.js') {
    throw new Error(`npm start of ${root} is not "node [flags] dist/main.js": ${start}`);
  }
  return words.slice(1, -1);
}

/**
 * BENCH_COMPARE_FLAGS: node flags for the compare build only (space-separated), to measure a
 * flag on one build (bench and bench:instructions).
 */
export function compareFlags(env: NodeJS.ProcessEnv = process.env): string[] {
  return (env['BENCH_COMPARE_FLAGS'] ?? '').split(' ').filter(Boolean);
}

/**
 * BENCH_COMPARE_ENV: settings for the compare build only (`NAME=value`, space-separated), to
 * measure a setting on one build (`BENCH_COMPARE=. BENCH_COMPARE_ENV=HISTORY_MAX_VERSIONS=0`).
 */
export function compareEnv(env: NodeJS.ProcessEnv = process.env): Record<string, string> {
  const out: Record<string, string> = {};
  for (const word of (env['BENCH_COMPARE_ENV'] ?? '').split(' ').filter(Boolean)) {
    const eq = word.indexOf('=');
    if (eq <= 0) throw new Error(`BENCH_COMPARE_ENV: "${word}" is not NAME=value`);
    out[word.slice(0, eq)] = word.slice(eq + 1);
  }
  return out;
}
