// `npm run capacity -- --ccu 1000000`: the fleet for that many concurrent players, from the latest
// measured cost of each session operation (bench/results/session-cost.json, written by
// `npm run bench:session`), the history a stored player holds on average over a population
// (bench/results/population.json, written by `npm run bench:population`, when present) and the
// player model of bench/lib/capacity.ts (each part a flag).
// docs/capacity.md explains the arithmetic and the model.
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Command, InvalidArgumentError } from 'commander';
import { DEFAULT_MODEL, plan, planText, type MeasuredCosts, type Model } from './lib/capacity.js';

/** What bench/population.ts writes that the plan reads. */
interface PopulationResults {
  readonly date?: string;
  readonly settings: { readonly players: number; readonly days: number };
  readonly capacity: { readonly historyBytesPerPlayer: number };
}

const positive = (raw: string) => {
  const n = Number(raw);
  if (!Number.isFinite(n) || n <= 0) throw new InvalidArgumentError('must be a positive number');
  return n;
};

const FLAGS: ReadonlyArray<readonly [keyof Omit<Model, 'ccu'>, string, string]> = [
  ['playersPerServer', '--players-per-server <n>', 'players of one game server'],
  ['autosaveSeconds', '--autosave-seconds <s>', "seconds between a server's autosaves"],
  ['sessionMinutes', '--session-minutes <m>', "a session's mean length (a join and a leave each)"],
  ['messagesPerPlayerHour', '--messages-per-player-hour <n>', 'messages sent to a player an hour'],
  ['leaderboardWritesPerPlayerHour', '--leaderboard-writes-per-player-hour <n>', 'leaderboard writes of a player an hour'],
  ['storedPerCcu', '--stored-per-ccu <n>', 'players kept in Redis per concurrent player'],
  ['idempotencyTtlSeconds', '--idempotency-ttl-seconds <s>', 'IDEMPOTENCY_TTL_SECONDS'],
  ['instanceCores', '--instance-cores <n>', "an instance's CPU limit"],
  ['serviceTargetCpu', '--service-target-cpu <share>', "share of an instance's cores used at peak"],
  ['redisTargetCpu', '--redis-target-cpu <share>', "share of a master's main thread used at peak"],
  ['redisMemoryGiB', '--redis-memory-gib <n>', 'maxmemory of a Redis node'],
  ['redisFill', '--redis-fill <share>', 'share of maxmemory filled'],
  ['minInstances', '--min-instances <n>', 'fewest instances'],
  ['minMasters', '--min-masters <n>', 'fewest Redis masters'],
];

const program = new Command()
  .name('npm run capacity --')
  .description('The fleet (instances, cores, Redis masters and replicas, memory, headroom) for a number of concurrent players.')
  .requiredOption('--ccu <n>', 'concurrent players', positive)
  .option('--results <file>', 'measured costs', fileURLToPath(new URL('./results/session-cost.json', import.meta.url)))
  .option('--population <file>', 'history per stored player over a population (default: population.json beside --results, when present)')
  .option('--json', 'print the plan as JSON');
for (const [key, flag, help] of FLAGS) program.option(flag, `${help} (${DEFAULT_MODEL[key]})`, positive);
program.parse();
const opts = program.opts<Record<string, unknown>>();

const model: Model = { ...DEFAULT_MODEL, ccu: opts['ccu'] as number };
for (const [key, flag] of FLAGS) {
  // commander's name for the flag: --redis-memory-gib is redisMemoryGib.
  const value = opts[flag.slice(2, flag.indexOf(' ')).replace(/-(\w)/g, (_, c: string) => c.toUpperCase())];
  if (typeof value === 'number') (model as unknown as Record<string, number>)[key] = value;
}
const source = relative(process.cwd(), opts['results'] as string) || (opts['results'] as string);
let costs = JSON.parse(readFileSync(source, 'utf8')) as MeasuredCosts;
// The history of a player seen within the history's retention, averaged over a simulated
// population (most play once, a few every day), instead of the heaviest player's 30 days.
const populationFile = (opts['population'] as string | undefined) ?? join(dirname(opts['results'] as string), 'population.json');
let populationLine = '';
if (opts['population'] !== undefined || existsSync(populationFile)) {
  const population = JSON.parse(readFileSync(populationFile, 'utf8')) as PopulationResults;
  costs = { ...costs, memory: { ...costs.memory, historyBytesPerPlayer: population.capacity.historyBytesPerPlayer } };
  populationLine =
    `history: ${population.capacity.historyBytesPerPlayer.toLocaleString('en')} B a stored player, the mean over the players written ` +
    `within the history's retention of a simulated population (${relative(process.cwd(), populationFile) || populationFile}, ` +
    `${population.settings.players.toLocaleString('en')} players over ${population.settings.days} days, measured ${population.date ?? '?'})`;
}
const result = plan(costs, model);
process.stdout.write(opts['json'] ? `${JSON.stringify(result, null, 2)}\n` : `${planText(result, costs, source)}\n${populationLine ? `${populationLine}\n` : ''}`);
