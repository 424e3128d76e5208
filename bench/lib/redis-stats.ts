// Reads what Redis did: commands by name (INFO commandstats, scripts' inner commands
// included, as Redis counts them), its CPU time with that of its AOF rewrites, and the rewrites
// it started, so runs can be compared by their deltas; and waits for a rewrite to end, so that
// one run's rewrite is not measured in the next.
import type { Redis } from 'ioredis';

export interface RedisSnapshot {
  readonly calls: Readonly<Record<string, number>>;
  /** Microseconds Redis spent inside each command, by name (INFO commandstats' usec). */
  readonly micros: Readonly<Record<string, number>>;
  /** Redis's own process and its reaped children (the AOF rewrites), user + system. */
  readonly cpuSeconds: number;
  /** AOF rewrites started since Redis started. */
  readonly aofRewrites: number;
  /** Microseconds Redis spent inside script calls (EVALSHA/EVAL), as INFO commandstats times them. */
  readonly scriptMicros: number;
}

/** Commands that run a script: one on the wire however many commands run inside. */
const SCRIPT_CALLS = new Set(['evalsha', 'eval']);

/** Our own polling, not part of the load. */
const IGNORED = new Set(['info', 'config|resetstat', 'ping', 'client|setname', 'client|setinfo', 'select']);

export async function snapshot(redis: Redis): Promise<RedisSnapshot> {
  const [commandstats, cpu, persistence] = await Promise.all([redis.info('commandstats'), redis.info('cpu'), redis.info('persistence')]);
  const calls: Record<string, number> = {};
  const micros: Record<string, number> = {};
  let scriptMicros = 0;
  for (const match of commandstats.matchAll(/^cmdstat_([^:]+):calls=(\d+),usec=(\d+)/gm)) {
    if (!IGNORED.has(match[1]!)) {
      calls[match[1]!] = Number(match[2]);
      micros[match[1]!] = Number(match[3]);
    }
    if (SCRIPT_CALLS.has(match[1]!)) scriptMicros += Number(match[3]);
  }
  const cpuSeconds = ['used_cpu_user', 'used_cpu_sys', 'used_cpu_user_children', 'used_cpu_sys_children']
    .map((field) => infoNumber(cpu, field))
    .reduce((a, b) => a + b, 0);
  return { calls, micros, cpuSeconds, aofRewrites: infoNumber(persistence, 'aof_rewrites'), scriptMicros };
}

/** A numeric field of an INFO section's text (0 when absent). */
export function infoNumber(info: string, field: string): number {
  return Number(new RegExp(`^${field}:([\\d.]+)`, 'm').exec(info)?.[1] ?? 0);
}

/**
 * Resolves once Redis runs no AOF rewrite (or RDB save) and has none scheduled, so that the
 * CPU of a rewrite a run started is reaped and counted in that run, and the next run does not
 * share the machine with it. Gives up after `timeoutMs` and says so.
 */
export async function persistenceIdle(redis: Redis, timeoutMs = 120_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const info = await redis.info('persistence');
    const busy = ['aof_rewrite_in_progress', 'aof_rewrite_scheduled', 'rdb_bgsave_in_progress'].some((field) => infoNumber(info, field) > 0);
    if (!busy) return;
    if (Date.now() > deadline) throw new Error(`Redis was still rewriting its AOF after ${timeoutMs} ms`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

export interface RedisDelta {
  readonly commands: number;
  /** Script calls (EVALSHA/EVAL): each is one command on the wire however many it runs inside. */
  readonly scripts: number;
  readonly byCommand: Readonly<Record<string, number>>;
  /** Microseconds inside each command, by name. */
  readonly microsByCommand: Readonly<Record<string, number>>;
  readonly cpuSeconds: number;
  readonly aofRewrites: number;
  /** Microseconds inside script calls. */
  readonly scriptMicros: number;
}

export function delta(before: RedisSnapshot, after: RedisSnapshot): RedisDelta {
  const byCommand: Record<string, number> = {};
  const microsByCommand: Record<string, number> = {};
  let commands = 0;
  let scripts = 0;
  for (const [name, calls] of Object.entries(after.calls)) {
    const d = calls - (before.calls[name] ?? 0);
    if (d <= 0) continue;
    byCommand[name] = d;
    microsByCommand[name] = (after.micros[name] ?? 0) - (before.micros[name] ?? 0);
    commands += d;
    if (SCRIPT_CALLS.has(name)) scripts += d;
  }
  return {
    commands,
    scripts,
    byCommand,
    microsByCommand,
    cpuSeconds: after.cpuSeconds - before.cpuSeconds,
    aofRewrites: after.aofRewrites - before.aofRewrites,
    scriptMicros: after.scriptMicros - before.scriptMicros,
  };
}

export async function usedMemory(redis: Redis): Promise<number> {
  return infoNumber(await redis.info('memory'), 'used_memory');
}
