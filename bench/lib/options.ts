// `npm run bench -- --help`: the bench's own options (commander). Each option sets the
// environment variable of the same meaning, so BENCH_ROUNDS=15 npm run bench and
// npm run bench -- --rounds 15 are the same run; an option wins over the variable.
import { spawnSync } from 'node:child_process';
import { Command, InvalidArgumentError } from 'commander';

function positive(raw: string): string {
  const n = Number(raw);
  if (!Number.isFinite(n) || n <= 0) throw new InvalidArgumentError('must be a positive number');
  return raw;
}

const OPTIONS: readonly { flag: string; env: string; help: string }[] = [
  { flag: '--rounds <n>', env: 'BENCH_ROUNDS', help: 'interleaved rounds of every target (5)' },
  { flag: '--duration <seconds>', env: 'BENCH_DURATION', help: 'length of each heavy run (2)' },
  { flag: '--connections <n>', env: 'BENCH_CONNECTIONS', help: 'connections of each heavy run (50)' },
  { flag: '--light-duration <seconds>', env: 'BENCH_LIGHT_DURATION', help: 'length of each 4-connection run (1)' },
  { flag: '--workspaces <n>', env: 'BENCH_WORKSPACES', help: 'workspaces seeded (2000)' },
  { flag: '--memory-players <n>', env: 'BENCH_MEMORY_PLAYERS', help: 'players stored for the memory figures (100000)' },
  { flag: '--board-entries <n>', env: 'BENCH_BOARD_ENTRIES', help: 'entries of the leaderboard scenarios\' board (1000000)' },
];

/** Parses the command line into process.env, builds the service unless --no-build, and returns. */
export function benchOptions(argv: readonly string[] = process.argv): void {
  const program = new Command()
    .name('npm run bench --')
    .description(
      'Benchmarks the built service against reference servers on a private redis-server (AOF everysec) and writes ' +
        'bench/results/latest.json. Every option can also be given as the environment variable in brackets. ' +
        'Ctrl-C (SIGINT) stops every process it started and removes its temporary folder.',
    )
    .helpOption('-h, --help', 'show this help');
  for (const o of OPTIONS) program.option(o.flag, `${o.help} [${o.env}]`, positive);
  program
    .option('--only <labels>', 'comma-separated target labels, or parts of them, to run [BENCH_ONLY]')
    .option('--compare <checkout>', "another built checkout whose service runs every scenario too, on a copy of the data [BENCH_COMPARE]")
    .option('--compare-flags <flags>', 'node flags for the compare build only, space-separated [BENCH_COMPARE_FLAGS]')
    .option('--compare-env <settings>', 'settings for the compare build only, NAME=value space-separated [BENCH_COMPARE_ENV]')
    .option('--loadgen <tool>', 'wrk (a process of its own; the default when installed) or autocannon (in the bench\'s process) [BENCH_LOADGEN]')
    .option('--no-build', 'use dist/ as it is instead of running npm run build first');
  program.parse([...argv]);
  const opts = program.opts<Record<string, string | boolean | undefined>>();
  for (const o of OPTIONS) {
    const name = o.flag.slice(2, o.flag.indexOf(' ')).replace(/-(\w)/g, (_, c: string) => c.toUpperCase());
    const value = opts[name];
    if (typeof value === 'string') process.env[o.env] = value;
  }
  if (typeof opts['only'] === 'string') process.env['BENCH_ONLY'] = opts['only'];
  if (typeof opts['compare'] === 'string') process.env['BENCH_COMPARE'] = opts['compare'];
  if (typeof opts['compareFlags'] === 'string') process.env['BENCH_COMPARE_FLAGS'] = opts['compareFlags'];
  if (typeof opts['loadgen'] === 'string') process.env['BENCH_LOADGEN'] = opts['loadgen'];
  if (typeof opts['compareEnv'] === 'string') process.env['BENCH_COMPARE_ENV'] = opts['compareEnv'];
  if (opts['build'] !== false) {
    const built = spawnSync('npm', ['run', 'build', '--silent'], { stdio: 'inherit' });
    if (built.status !== 0) process.exit(built.status ?? 1);
  }
}
