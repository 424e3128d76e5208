// The fleet a number of concurrent players needs, from the measured cost of each operation of
// the session workload (bench/session-cost.ts writes them) and a model of what a player does.
// Pure arithmetic, so that `npm run capacity` and its test agree: docs/capacity.md explains it.

export type Operation = 'join' | 'autosave' | 'leave' | 'message' | 'leaderboard';
export const OPERATIONS: readonly Operation[] = ['join', 'autosave', 'leave', 'message', 'leaderboard'];

export interface MeasuredCosts {
  readonly date?: string;
  readonly machine?: { readonly cpuModel?: string; readonly loadAverageAtStart?: number; readonly loadAverageAtEnd?: number };
  readonly operations: Record<Operation, { readonly serviceCpuMicros: number; readonly redisCpuMicros: number; readonly redisCommandMicros: number; readonly players: number }>;
  readonly memory: {
    readonly dataBytesPerPlayer: number;
    readonly inboxBytesPerPlayer: number;
    readonly historyBytesPerPlayer: number;
    readonly keptBytesPerRequest: number;
    /** An instance's peak resident memory under the workload (absent in older results). */
    readonly servicePeakRssBytes?: number;
  };
}

/** What a player does, and how much of each machine the plan may use at peak. */
export interface Model {
  readonly ccu: number;
  readonly playersPerServer: number;
  /** Seconds between a server's autosaves of all its players (one batch). */
  readonly autosaveSeconds: number;
  /** A session's mean length: one join and one leave each. */
  readonly sessionMinutes: number;
  readonly messagesPerPlayerHour: number;
  readonly leaderboardWritesPerPlayerHour: number;
  /** Players whose data and history Redis keeps, per concurrent player (those seen within the history's 30 days). */
  readonly storedPerCcu: number;
  /** How long kept answers of Idempotency-Keys live (IDEMPOTENCY_TTL_SECONDS). */
  readonly idempotencyTtlSeconds: number;
  /** Cores of one instance (its CPU limit). */
  readonly instanceCores: number;
  /** The share of an instance's cores the plan uses at peak; the rest is headroom. */
  readonly serviceTargetCpu: number;
  /** The share of a Redis master's one main thread the plan uses at peak. */
  readonly redisTargetCpu: number;
  /** maxmemory of a Redis master (and of its replica), GiB. */
  readonly redisMemoryGiB: number;
  /** The share of maxmemory the plan fills; the rest is headroom (and room for a rewrite's copy-on-write). */
  readonly redisFill: number;
  /** Fewest instances (one may fail or be replaced) and fewest masters (a cluster's minimum). */
  readonly minInstances: number;
  readonly minMasters: number;
}

export const DEFAULT_MODEL: Omit<Model, 'ccu'> = {
  playersPerServer: 30,
  autosaveSeconds: 60,
  sessionMinutes: 30,
  messagesPerPlayerHour: 6,
  leaderboardWritesPerPlayerHour: 12,
  storedPerCcu: 20,
  idempotencyTtlSeconds: 86_400,
  instanceCores: 1,
  serviceTargetCpu: 0.6,
  redisTargetCpu: 0.5,
  redisMemoryGiB: 25,
  redisFill: 0.7,
  minInstances: 2,
  minMasters: 3,
};

export interface Plan {
  readonly model: Model;
  /** Operations a second at peak. */
  readonly rates: Record<Operation, number>;
  readonly requestsPerSecond: number;
  /** Cores the service and Redis spend, by operation and in all. */
  readonly serviceCores: Record<Operation, number> & { total: number };
  readonly redisCores: Record<Operation, number> & { total: number };
  readonly instances: number;
  readonly cores: number;
  /** The busy share of the instances' cores at peak. */
  readonly serviceUtilisation: number;
  /** Memory to give each instance: twice its measured peak resident memory (0 when not measured). */
  readonly instanceMemoryBytes: number;
  readonly memoryBytes: { data: number; history: number; inbox: number; kept: number; total: number };
  readonly mastersForCpu: number;
  readonly mastersForMemory: number;
  readonly masters: number;
  readonly replicas: number;
  /** The busy share of each master's main thread, and the share of its maxmemory filled. */
  readonly redisUtilisation: number;
  readonly redisMemoryFill: number;
  /** maxmemory of every node, masters and replicas, GiB. */
  readonly redisMemoryProvisionedGiB: number;
}

const GiB = 2 ** 30;

export function plan(costs: MeasuredCosts, model: Model): Plan {
  const rates: Record<Operation, number> = {
    join: model.ccu / (model.sessionMinutes * 60),
    leave: model.ccu / (model.sessionMinutes * 60),
    autosave: model.ccu / model.playersPerServer / model.autosaveSeconds,
    message: (model.ccu * model.messagesPerPlayerHour) / 3600,
    leaderboard: (model.ccu * model.leaderboardWritesPerPlayerHour) / 3600,
  };
  // An autosave measured with another number of players than the model's scales with its players.
  const scale = (op: Operation) => (op === 'autosave' ? model.playersPerServer / costs.operations.autosave.players : 1);
  const by = (cost: (op: Operation) => number) => {
    const out = { total: 0 } as Record<Operation, number> & { total: number };
    for (const op of OPERATIONS) {
      out[op] = (rates[op] * cost(op) * scale(op)) / 1e6;
      out.total += out[op];
    }
    return out;
  };
  const serviceCores = by((op) => costs.operations[op].serviceCpuMicros);
  // Redis's process CPU, or the time inside its commands when that is the larger (the process
  // figure less its idle time can fall below it on a noisy machine).
  const redisCores = by((op) => Math.max(costs.operations[op].redisCpuMicros, costs.operations[op].redisCommandMicros));
  const requestsPerSecond = OPERATIONS.reduce((a, op) => a + rates[op], 0);

  const instances = Math.max(model.minInstances, Math.ceil(serviceCores.total / (model.instanceCores * model.serviceTargetCpu)));
  const stored = model.ccu * model.storedPerCcu;
  const m = costs.memory;
  const memory = {
    data: stored * m.dataBytesPerPlayer,
    history: stored * m.historyBytesPerPlayer,
    inbox: model.ccu * m.inboxBytesPerPlayer,
    kept: requestsPerSecond * model.idempotencyTtlSeconds * m.keptBytesPerRequest,
    total: 0,
  };
  memory.total = memory.data + memory.history + memory.inbox + memory.kept;
  const mastersForCpu = Math.ceil(redisCores.total / model.redisTargetCpu);
  const mastersForMemory = Math.ceil(memory.total / (model.redisMemoryGiB * GiB * model.redisFill));
  const masters = Math.max(model.minMasters, mastersForCpu, mastersForMemory);
  return {
    model,
    rates,
    requestsPerSecond,
    serviceCores,
    redisCores,
    instances,
    cores: instances * model.instanceCores,
    serviceUtilisation: serviceCores.total / (instances * model.instanceCores),
    instanceMemoryBytes: 2 * (costs.memory.servicePeakRssBytes ?? 0),
    memoryBytes: memory,
    mastersForCpu,
    mastersForMemory,
    masters,
    replicas: masters,
    redisUtilisation: redisCores.total / masters,
    redisMemoryFill: memory.total / (masters * model.redisMemoryGiB * GiB),
    redisMemoryProvisionedGiB: masters * 2 * model.redisMemoryGiB,
  };
}

const fixed = (n: number, digits = 1) => n.toLocaleString('en', { maximumFractionDigits: digits, minimumFractionDigits: digits });
const whole = (n: number) => Math.round(n).toLocaleString('en');
const pct = (n: number) => `${Math.round(n * 100)}%`;
const gib = (n: number) => `${fixed(n / GiB)} GiB`;

export function planText(p: Plan, costs: MeasuredCosts, source: string): string {
  const m = p.model;
  const lines = [
    `Capacity plan for ${whole(m.ccu)} concurrent players (from ${source}, measured ${costs.date ?? '?'}${costs.machine?.cpuModel ? ` on ${costs.machine.cpuModel}` : ''})`,
    `model: servers of ${m.playersPerServer}, an autosave every ${m.autosaveSeconds} s, sessions of ${m.sessionMinutes} min, ` +
      `${m.messagesPerPlayerHour} messages and ${m.leaderboardWritesPerPlayerHour} leaderboard writes a player an hour, ` +
      `${m.storedPerCcu} stored players per concurrent one`,
    '',
    'operation     per second   service µs/op  service cores   Redis µs/op  Redis cores',
  ];
  for (const op of OPERATIONS) {
    const c = costs.operations[op];
    const scale = op === 'autosave' ? m.playersPerServer / c.players : 1;
    lines.push(
      `${op.padEnd(12)} ${whole(p.rates[op]).padStart(11)} ${whole(c.serviceCpuMicros * scale).padStart(15)} ${fixed(p.serviceCores[op], 2).padStart(14)} ` +
        `${whole(Math.max(c.redisCpuMicros, c.redisCommandMicros) * scale).padStart(13)} ${fixed(p.redisCores[op], 2).padStart(12)}`,
    );
  }
  lines.push(
    `${'all'.padEnd(12)} ${whole(p.requestsPerSecond).padStart(11)} ${''.padStart(15)} ${fixed(p.serviceCores.total, 2).padStart(14)} ${''.padStart(13)} ${fixed(p.redisCores.total, 2).padStart(12)}`,
    '',
    `service: ${p.instances} instances of ${m.instanceCores} core (${p.cores} cores), ${pct(p.serviceUtilisation)} busy at peak ` +
      `(target ${pct(m.serviceTargetCpu)}; headroom ${pct(1 - p.serviceUtilisation)})` +
      (p.instanceMemoryBytes > 0 ? `; memory ${whole(p.instanceMemoryBytes / 2 ** 20)} MiB each (twice the measured peak)` : ''),
    `Redis memory: data ${gib(p.memoryBytes.data)}, history ${gib(p.memoryBytes.history)}, kept answers ${gib(p.memoryBytes.kept)}, ` +
      `inboxes ${gib(p.memoryBytes.inbox)}: ${gib(p.memoryBytes.total)}`,
    `Redis: ${p.masters} masters + ${p.replicas} replicas (${p.mastersForCpu} for CPU at ${pct(m.redisTargetCpu)} of a main thread, ` +
      `${p.mastersForMemory} for memory at ${pct(m.redisFill)} of ${m.redisMemoryGiB} GiB); each master ${pct(p.redisUtilisation)} busy, ` +
      `${pct(p.redisMemoryFill)} of its memory; ${fixed(p.redisMemoryProvisionedGiB, 0)} GiB of maxmemory over all ${p.masters + p.replicas} nodes`,
  );
  return lines.join('\n');
}
