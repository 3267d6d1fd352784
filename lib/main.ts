import { ConfigError, loadConfig, type Config } from './config.js';
import { createLogger, type Logger } from './logger.js';

/**
 * The life of a command-line entry point (`npm start`, `npm run worker`, one part of the platform):
 * configuration validated first (a bad value: every problem named, exit 1), then `start`, then a
 * clean stop on SIGINT or SIGTERM (exit 0) or a failed one (exit 1).
 */
export async function runMain(name: string, start: (config: Config, logger: Logger) => Promise<{ close(): Promise<void> }>): Promise<void> {
  let config: Config;
  try {
    config = loadConfig();
  } catch (error) {
    console.error(error instanceof ConfigError ? error.message : error);
    process.exit(1);
  }
  const logger = createLogger(config);
  let running: { close(): Promise<void> };
  try {
    running = await start(config, logger);
  } catch (error) {
    logger.error({ err: error }, `${name} could not start`);
    console.error(`${name} could not start:`, error instanceof Error ? error.message : error);
    process.exit(1);
  }

  let stopping = false;
  const stop = async (signal: string) => {
    if (stopping) return;
    stopping = true;
    logger.info({ signal }, 'shutting down');
    try {
      await running.close();
      logger.info('stopped cleanly');
      process.exit(0);
    } catch (error) {
      logger.error({ err: error }, 'shutdown failed');
      process.exit(1);
    }
  };
  process.on('SIGINT', () => void stop('SIGINT'));
  process.on('SIGTERM', () => void stop('SIGTERM'));
}
