import 'reflect-metadata';
import { ConfigError, loadConfig, type Config } from '../lib/config.js';
import { createLogger } from '../lib/logger.js';
import { startPlatform } from './platform.js';

/** `npm start`: every subgraph, the gateway and every REST adapter in one process. */
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
  const platform = await startPlatform(config, logger);

  const lines = [
    `gateway (GraphQL, Sandbox)  ${platform.gateway.url}`,
    `social REST                 ${platform.rest.social.url}`,
    `surveys REST                ${platform.rest.surveys.url}`,
    `contacts REST               ${platform.rest.contacts.url}`,
    `social subgraph             ${platform.subgraphs.social.url}`,
    `surveys subgraph            ${platform.subgraphs.surveys.url}`,
    `contacts subgraph           ${platform.subgraphs.contacts.url}`,
  ];
  console.log(`\nPlatform running (${config.env.DATABASE_URL ? 'PostgreSQL' : `embedded PGlite in ${config.dataDir}`}):\n  ${lines.join('\n  ')}\n`);

  let stopping = false;
  const stop = async (signal: string) => {
    if (stopping) return;
    stopping = true;
    logger.info({ signal }, 'shutting down');
    try {
      await platform.close();
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

main().catch((error: unknown) => {
  console.error('The platform could not start:', error instanceof Error ? error.message : error);
  process.exit(1);
});
