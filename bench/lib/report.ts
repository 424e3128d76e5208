// Turns the rounds into medians, ratios to the references, a printed table and the JSON file.
import type { RunResult } from './load.js';

export function median(values: readonly number[]): number {
  if (values.length === 0) return NaN;
  const sorted = [...values].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  return sorted.length % 2 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
}

const NUMERIC: readonly (keyof RunResult)[] = [
  'requestsPerSecond',
  'requests',
  'p50',
  'p99',
  'max',
  'unexpected',
  'cpuMicrosPerRequest',
  'syscallReadsPerRequest',
  'syscallWritesPerRequest',
  'redisCommandsPerRequest',
  'redisScriptsPerRequest',
  'redisMicrosPerRequest',
];

export type MedianResult = Omit<RunResult, 'redisCommands'> & { redisCommands: Record<string, number> };

/** Median of each figure on its own over the rounds (the commands map comes from the median-rps round). */
export function medianOf(runs: readonly RunResult[]): MedianResult {
  const out: Record<string, unknown> = {};
  for (const key of NUMERIC) out[key] = round(median(runs.map((r) => r[key] as number)), 2);
  const byRps = [...runs].sort((a, b) => a.requestsPerSecond - b.requestsPerSecond);
  out['redisCommands'] = byRps[byRps.length >> 1]?.redisCommands ?? {};
  // Not a median: every unexpected answer of every round, by status, to say what went wrong.
  const byStatus: Record<string, number> = {};
  for (const run of runs) for (const [status, n] of Object.entries(run.unexpectedByStatus)) byStatus[status] = (byStatus[status] ?? 0) + n;
  out['unexpectedByStatus'] = byStatus;
  // Not a median either: the AOF rewrites that every round together started.
  out['aofRewrites'] = runs.reduce((sum, run) => sum + run.aofRewrites, 0);
  return out as MedianResult;
}

export function round(n: number, digits = 2): number {
  const f = 10 ** digits;
  return Math.round(n * f) / f;
}

export interface Row {
  readonly label: string;
  readonly heavy: MedianResult;
  readonly light?: MedianResult | undefined;
  /** The lowest and highest requests/s of the heavy runs: how far one round can be off. */
  readonly rpsRange?: readonly [number, number] | undefined;
}

/** The lowest and highest requests/s over the rounds. */
export function rpsRange(runs: readonly RunResult[]): [number, number] {
  const rps = runs.map((r) => Math.round(r.requestsPerSecond));
  return [Math.min(...rps), Math.max(...rps)];
}

export const REFERENCES = {
  bare: 'ref: node:http constant',
  httpHget: 'ref: node:http + HGET',
  koaHget: 'ref: Koa + HGET',
  /** Koa taking each write's own request (the service's body reader and schema) with one command. */
  koaSet: "ref: Koa + HSET (set's request)",
  koaIncrement: "ref: Koa + HINCRBY (increment's request)",
  koaBatch: "ref: Koa + HSET (batch's request)",
} as const;

/**
 * Issue 28's targets: each endpoint against a Koa reference that takes the same request (the
 * same body, read and validated as the service does) and does one Redis command.
 */
export const TARGETS = [
  { target: 'get', endpoint: 'GET /data (one key)', reference: REFERENCES.koaHget, goal: 0.8 },
  { target: 'set', endpoint: 'POST /data/set, 1 KB', reference: REFERENCES.koaSet, goal: 0.8 },
  { target: 'increment', endpoint: 'POST /data/increment', reference: REFERENCES.koaIncrement, goal: 0.8 },
  { target: 'save20 batch', endpoint: 'POST /data/batch, 20 keys', reference: REFERENCES.koaBatch, goal: 0.8 },
] as const;

export interface TargetResult {
  readonly endpoint: string;
  readonly target: string;
  readonly reference: string;
  readonly requestsPerSecond: number;
  readonly referenceRequestsPerSecond: number;
  /** Requests/s over the reference's, the medians of the same rounds. */
  readonly ratio: number | null;
  /** The reference's CPU a request (its process and Redis's) over ours: the ratio to expect when both are CPU-bound. */
  readonly cpuRatio: number | null;
  readonly p99Ms: number;
  readonly referenceP99Ms: number;
  readonly goal: number;
  readonly met: boolean;
}

/** Each target whose row and reference's row both ran. */
export function targetResults(rows: readonly Row[]): TargetResult[] {
  const out: TargetResult[] = [];
  for (const t of TARGETS) {
    const row = rows.find((r) => r.label === t.target);
    const ref = rows.find((r) => r.label === t.reference);
    if (!row || !ref) continue;
    const ratio = ref.heavy.requestsPerSecond > 0 ? round(row.heavy.requestsPerSecond / ref.heavy.requestsPerSecond) : null;
    const cpu = (r: Row) => r.heavy.cpuMicrosPerRequest + r.heavy.redisMicrosPerRequest;
    out.push({
      endpoint: t.endpoint,
      target: t.target,
      reference: t.reference,
      requestsPerSecond: Math.round(row.heavy.requestsPerSecond),
      referenceRequestsPerSecond: Math.round(ref.heavy.requestsPerSecond),
      ratio,
      cpuRatio: cpu(row) > 0 ? round(cpu(ref) / cpu(row)) : null,
      p99Ms: row.heavy.p99,
      referenceP99Ms: ref.heavy.p99,
      goal: t.goal,
      met: ratio !== null && ratio >= t.goal,
    });
  }
  return out;
}

export function targetsText(results: readonly TargetResult[], connections: number): string {
  const header = ['target', 'reference', 'req/s', 'ref req/s', 'x ref', 'cpu x', `p99 ms @${connections}`, `ref p99`, 'goal', 'met'];
  const widths = [28, 40, 7, 9, 6, 6, 12, 8, 5, 4];
  const lines = [header.map((h, i) => pad(h, widths[i]!, i > 1)).join(' ')];
  for (const r of results) {
    const cells = [
      r.endpoint,
      r.reference,
      String(r.requestsPerSecond),
      String(r.referenceRequestsPerSecond),
      fmt(r.ratio),
      fmt(r.cpuRatio),
      String(r.p99Ms),
      String(r.referenceP99Ms),
      `>=${r.goal}`,
      r.met ? 'yes' : 'NO',
    ];
    lines.push(cells.map((c, i) => pad(c, widths[i]!, i > 1)).join(' '));
  }
  return lines.join('\n');
}

export function ratios(row: Row, rows: readonly Row[]) {
  const find = (label: string) => rows.find((r) => r.label === label);
  const ratio = (a: number | undefined, b: number | undefined) => (a && b ? round(a / b) : null);
  const koa = find(REFERENCES.koaHget);
  const target = TARGETS.find((t) => t.target === row.label);
  return {
    rpsVsBare: ratio(row.heavy.requestsPerSecond, find(REFERENCES.bare)?.heavy.requestsPerSecond),
    rpsVsHttpHget: ratio(row.heavy.requestsPerSecond, find(REFERENCES.httpHget)?.heavy.requestsPerSecond),
    rpsVsKoaHget: ratio(row.heavy.requestsPerSecond, koa?.heavy.requestsPerSecond),
    p50LightVsKoaHget: ratio(row.light?.p50, koa?.light?.p50),
    /** CPU per request of the Koa reference over ours: the throughput ratio if both were CPU-bound. */
    cpuEfficiencyVsKoaHget: ratio(koa?.heavy.cpuMicrosPerRequest, row.heavy.cpuMicrosPerRequest),
    /** A target of issue 28's: the ratio to its Koa reference taking the same request. */
    rpsVsReference: target ? ratio(row.heavy.requestsPerSecond, find(target.reference)?.heavy.requestsPerSecond) : null,
  };
}

function pad(text: string, width: number, right = false): string {
  return right ? text.padStart(width) : text.padEnd(width);
}

export function table(rows: readonly Row[], connections: number, lightConnections: number): string {
  const header = [
    'target', 'req/s', 'min-max', 'x bare', 'x http', 'x koa',
    `p50/p99/max ms @${connections}`, `p50/p99/max ms @${lightConnections}`, 'p50@4 x koa',
    'redis cmd/req', 'script/req', 'cpu us/req', 'koa cpu/cpu', 'redis us/req', 'aof rw', 'bad',
  ];
  const widths = [41, 8, 12, 7, 7, 7, 20, 20, 11, 13, 10, 10, 11, 12, 6, 5];
  const lines = [header.map((h, i) => pad(h, widths[i]!, i > 0)).join(' ')];
  for (const row of rows) {
    const r = ratios(row, rows);
    const h = row.heavy;
    const l = row.light;
    const cells = [
      row.label,
      String(Math.round(h.requestsPerSecond)),
      row.rpsRange ? `${row.rpsRange[0]}-${row.rpsRange[1]}` : '-',
      fmt(r.rpsVsBare),
      fmt(r.rpsVsHttpHget),
      fmt(r.rpsVsKoaHget),
      `${h.p50}/${h.p99}/${h.max}`,
      l ? `${l.p50}/${l.p99}/${l.max}` : '-',
      fmt(r.p50LightVsKoaHget),
      h.redisCommandsPerRequest.toFixed(2),
      h.redisScriptsPerRequest.toFixed(2),
      String(Math.round(h.cpuMicrosPerRequest)),
      fmt(r.cpuEfficiencyVsKoaHget),
      String(Math.round(h.redisMicrosPerRequest)),
      String(h.aofRewrites),
      String(Math.round(h.unexpected)),
    ];
    lines.push(cells.map((c, i) => pad(c, widths[i]!, i > 0)).join(' '));
  }
  return lines.join('\n');
}

function fmt(n: number | null): string {
  return n === null ? '-' : n.toFixed(2);
}

/**
 * "Save a player of 20 keys", from the two save scenarios' rows: players saved per second and
 * requests spent per save each way (per key, a save is 20 requests; batched, one), and the
 * batch endpoint's requests/s over the Koa + HGET reference's.
 */
export function savePlayerSummary(rows: readonly Row[], labels: { perKey: string; batch: string }, keys: number) {
  const perKey = rows.find((r) => r.label === labels.perKey);
  const batch = rows.find((r) => r.label === labels.batch);
  if (!perKey || !batch) return undefined;
  const perKeyPlayers = perKey.heavy.requestsPerSecond / keys;
  const batchPlayers = batch.heavy.requestsPerSecond;
  return {
    keys,
    perKey: { requestsPerSave: keys, playersPerSecond: Math.round(perKeyPlayers), requestsPerSecond: Math.round(perKey.heavy.requestsPerSecond) },
    batch: {
      requestsPerSave: 1,
      playersPerSecond: Math.round(batchPlayers),
      requestsPerSecond: Math.round(batchPlayers),
      rpsVsKoaHget: ratios(batch, rows).rpsVsKoaHget,
      p50Ms: batch.heavy.p50,
      redisCommandsPerRequest: round(batch.heavy.redisCommandsPerRequest),
    },
    /** How many times more players per second the batch saves. */
    batchOverPerKey: round(batchPlayers / perKeyPlayers),
  };
}

export function savePlayerText(summary: NonNullable<ReturnType<typeof savePlayerSummary>>): string {
  const { keys, perKey, batch } = summary;
  return (
    `save a player of ${keys} keys: per key (${perKey.requestsPerSave} requests a save) ${perKey.playersPerSecond} players/s; ` +
    `one batch (1 request a save) ${batch.playersPerSecond} players/s, ${summary.batchOverPerKey}x; ` +
    `batch req/s over ${REFERENCES.koaHget}: ${batch.rpsVsKoaHget ?? '-'}x`
  );
}
