// Boot only: config -> logger -> service -> listen; SIGTERM/SIGINT drain and exit 0.
// With WORKERS > 1 this process only supervises workers (cluster.ts), each of which boots here.
import cluster from 'node:cluster';
import { runPrimary } from './cluster.js';
import { ConfigError, loadConfig } from './config.js';
import { createLogger } from './logger.js';
import { startService } from './server.js';

async function main(): Promise<void> {
  let config;
  try {
    config = loadConfig();
  } catch (err) {
    if (err instanceof ConfigError) {
      process.stderr.write(`Invalid configuration: ${err.message}\n`);
      process.exit(2);
    }
    throw err;
  }
  const logger = createLogger(config);
  if (config.workers > 1 && cluster.isPrimary) {
    runPrimary(config, logger);
    return;
  }
  let service;
  try {
    service = await startService(config, logger);
  } catch (err) {
    logger.fatal({ err: (err as Error).message }, 'could not start');
    process.exit(1);
  }
  logger.info({ url: service.baseUrl, port: service.port }, 'player data service listening');

  // SIGTERM: /readyz answers 503 for SHUTDOWN_DRAIN_MS while requests are still served, so a
  // load balancer takes the instance out before it stops accepting; then in-flight requests get
  // SHUTDOWN_GRACE_MS to finish. A second signal cuts the drain short.
  let skipDrain: (() => void) | undefined;
  const stop = (signal: string) => {
    if (skipDrain) {
      logger.info({ signal }, 'second signal: ending the drain now');
      skipDrain();
      return;
    }
    const drain = service.drain(config.shutdownDrainMs);
    skipDrain = drain.skip;
    logger.info({ signal, drainMs: config.shutdownDrainMs }, 'shutting down: /readyz answers 503, still serving');
    drain.done
      .then(() => {
        logger.info('shutting down: no new connections, draining in-flight requests');
        return service.close();
      })
      .then(
        () => {
          logger.info('stopped');
          process.exit(0);
        },
        (err: unknown) => {
          logger.error({ err }, 'unclean shutdown');
          process.exit(1);
        },
      );
  };
  process.on('SIGTERM', () => stop('SIGTERM'));
  process.on('SIGINT', () => stop('SIGINT'));
}

void main();
