// Reads what Redis did: commands by name (INFO commandstats, scripts' inner commands
// included, as Redis counts them) and its CPU time, so runs can be compared by their deltas.
import type { Redis } from 'ioredis';

export interface RedisSnapshot {
  readonly calls: Readonly<Record<string, number>>;
  readonly cpuSeconds: number;
}

/** Our own polling, not part of the load. */
const IGNORED = new Set(['info', 'config|resetstat', 'ping', 'client|setname', 'client|setinfo', 'select']);

export async function snapshot(redis: Redis): Promise<RedisSnapshot> {
  const [commandstats, cpu] = await Promise.all([redis.info('commandstats'), redis.info('cpu')]);
  const calls: Record<string, number> = {};
  for (const match of commandstats.matchAll(/^cmdstat_([^:]+):calls=(\d+)/gm)) {
    if (!IGNORED.has(match[1]!)) calls[match[1]!] = Number(match[2]);
  }
  const user = Number(/used_cpu_user:([\d.]+)/.exec(cpu)?.[1] ?? 0);
  const sys = Number(/used_cpu_sys:([\d.]+)/.exec(cpu)?.[1] ?? 0);
  return { calls, cpuSeconds: user + sys };
}

export interface RedisDelta {
  readonly commands: number;
  /** Script calls (EVALSHA/EVAL): each is one command on the wire however many it runs inside. */
  readonly scripts: number;
  readonly byCommand: Readonly<Record<string, number>>;
  readonly cpuSeconds: number;
}

export function delta(before: RedisSnapshot, after: RedisSnapshot): RedisDelta {
  const byCommand: Record<string, number> = {};
  let commands = 0;
  let scripts = 0;
  for (const [name, calls] of Object.entries(after.calls)) {
    const d = calls - (before.calls[name] ?? 0);
    if (d <= 0) continue;
    byCommand[name] = d;
    commands += d;
    if (name === 'evalsha' || name === 'eval') scripts += d;
  }
  return { commands, scripts, byCommand, cpuSeconds: after.cpuSeconds - before.cpuSeconds };
}

export async function usedMemory(redis: Redis): Promise<number> {
  const info = await redis.info('memory');
  return Number(/^used_memory:(\d+)/m.exec(info)?.[1]);
}
