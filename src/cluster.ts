// The primary process when WORKERS > 1: forks that many workers, which each run the whole
// service on the shared ports (node:cluster hands them the connections), replaces a worker
// that dies unexpectedly, and on SIGTERM/SIGINT asks every worker to drain and waits for it.
import cluster, { type Worker } from 'node:cluster';
import type { Config } from './config.js';
import type { Logger } from './logger.js';

/** A worker that dies sooner than this after its start is not replaced (it would crash-loop). */
const MIN_UPTIME_MS = 5_000;

export function runPrimary(config: Pick<Config, 'workers' | 'shutdownGraceMs' | 'shutdownDrainMs'>, logger: Logger): void {
  let stopping = false;
  const startedAt = new Map<Worker, number>();

  const fork = () => {
    const worker = cluster.fork();
    startedAt.set(worker, Date.now());
  };

  cluster.on('exit', (worker, code, signal) => {
    const uptime = Date.now() - (startedAt.get(worker) ?? 0);
    startedAt.delete(worker);
    if (stopping) {
      if (startedAt.size === 0) process.exit(0);
      return;
    }
    logger.error({ pid: worker.process.pid, code, signal, uptimeMs: uptime }, 'worker exited');
    if (uptime >= MIN_UPTIME_MS) fork();
    else if (startedAt.size === 0) {
      logger.fatal('every worker failed at start-up');
      process.exit(1);
    }
  });

  const stop = (signal: NodeJS.Signals) => {
    if (stopping) return;
    stopping = true;
    logger.info({ signal, workers: startedAt.size }, 'shutting down the workers');
    for (const worker of startedAt.keys()) worker.process.kill('SIGTERM');
    // Each worker bounds its own drain and grace periods; this only guards a stuck one.
    setTimeout(() => {
      logger.error('workers did not stop in time');
      process.exit(1);
    }, config.shutdownDrainMs + config.shutdownGraceMs + 5_000).unref();
    if (startedAt.size === 0) process.exit(0);
  };
  process.once('SIGTERM', () => stop('SIGTERM'));
  process.once('SIGINT', () => stop('SIGINT'));

  for (let i = 0; i < config.workers; i++) fork();
  logger.info({ workers: config.workers }, 'primary started its workers');
}
