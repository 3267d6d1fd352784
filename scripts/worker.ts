import 'reflect-metadata';
import { ConfigError, loadConfig, type Config } from '../lib/config.js';
import { createLogger } from '../lib/logger.js';
import { startPublisherWorker } from '../subgraphs/social/publisher.worker.js';

/** `npm run worker`: the social publisher (and token renewal) as a process of its own. */
async function main(): Promise<void> {
  let config: Config;
  try {
    config = loadConfig();
  } catch (error) {
    if (error instanceof ConfigError) {
      console.error(error.message);
      process.exit(1);
    }
    throw error;
  }
  const logger = createLogger(config);
  const worker = await startPublisherWorker(config, logger);
  logger.info('publisher worker running');

  let stopping = false;
  const stop = async (signal: string) => {
    if (stopping) return;
    stopping = true;
    logger.info({ signal }, 'shutting down');
    try {
      await worker.close();
      process.exit(0);
    } catch (error) {
      logger.error({ err: error }, 'shutdown failed');
      process.exit(1);
    }
  };
  process.on('SIGINT', () => void stop('SIGINT'));
  process.on('SIGTERM', () => void stop('SIGTERM'));
}

main().catch((error) => {
  console.error(error);
  process.exit(1);
});
