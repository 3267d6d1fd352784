import 'reflect-metadata';
import { runMain } from '../lib/main.js';
import { startPublisherWorker } from '../subgraphs/social/index.js';

/** `npm run worker`: the social publisher (and token renewal) as a process of its own. */
void runMain('The publisher worker', async (config, logger) => {
  const worker = await startPublisherWorker(config, logger);
  logger.info('publisher worker running');
  return worker;
});
