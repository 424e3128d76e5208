// Times every command a Redis client sends and counts the failures, by command name, by
// wrapping the client's sendCommand: every command (plain, auto-pipelined, scripts, cluster)
// passes through it once on its way to the socket, and ioredis has no per-command event.
import { performance } from 'node:perf_hooks';
import type { RedisClient } from './redis.js';

export interface CommandObserver {
  observeRedisCommand(command: string, seconds: number, failed: boolean): void;
}

const TIMED = Symbol('pds.timed');
type TimedCommand = { name: string; [TIMED]?: true };
type SendCommand = (command: TimedCommand, ...rest: unknown[]) => Promise<unknown>;

export function instrumentRedis(client: RedisClient, observer: CommandObserver): void {
  const target = client as unknown as { sendCommand: SendCommand };
  const send = target.sendCommand.bind(client) as SendCommand;
  target.sendCommand = function sendTimed(command, ...rest) {
    // A command queued while offline, or resent after a reconnect, comes through again.
    if (command[TIMED]) return send(command, ...rest);
    command[TIMED] = true;
    const started = performance.now();
    const promise = send(command, ...rest);
    // Names from generated methods are lower case already; redis.call('GET') keeps its case.
    const name = command.name.toLowerCase();
    promise.then(
      () => observer.observeRedisCommand(name, (performance.now() - started) / 1000, false),
      () => observer.observeRedisCommand(name, (performance.now() - started) / 1000, true),
    );
    return promise;
  };
}
