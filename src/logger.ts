// The service's pino logger. Credentials are redacted at the logger, so that no code path
// can log a raw API key or admin token by accident.
import { createRequire } from 'node:module';
import { pino, type Logger } from 'pino';
import type { Config } from './config.js';

export type { Logger };

export const REDACTED_PATHS = [
  'req.headers["x-api-key"]',
  'req.headers.authorization',
  'headers["x-api-key"]',
  'headers.authorization',
  'apiKey',
  '*.apiKey',
];

export function createLogger(config: Pick<Config, 'logLevel' | 'nodeEnv'>, destination?: pino.DestinationStream): Logger {
  const options: pino.LoggerOptions = {
    level: config.logLevel,
    base: { service: 'player-data-service' },
    redact: { paths: REDACTED_PATHS, censor: '[redacted]' },
    timestamp: pino.stdTimeFunctions.isoTime,
  };
  if (destination) return pino(options, destination);
  if (config.nodeEnv === 'development' && process.stdout.isTTY && prettyInstalled()) {
    return pino({ ...options, transport: { target: 'pino-pretty', options: { colorize: true } } });
  }
  return pino(options);
}

/** pino-pretty is a dev dependency: a production image without it still logs, as JSON. */
function prettyInstalled(): boolean {
  try {
    createRequire(import.meta.url).resolve('pino-pretty');
    return true;
  } catch {
    return false;
  }
}
