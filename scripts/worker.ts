import 'reflect-metadata';
import { exitWithHelpIfAsked } from '#lib/cli.js';
import { runMain } from '#lib/process/main.js';
import { publisherWorkerRefusal, startPublisherWorker } from '#subgraphs/social/index.js';

exitWithHelpIfAsked(`
usage: npm run worker       (node dist/scripts/worker.js)

Runs the social publisher (scheduled posts, platform token renewal, webhook deliveries) as a process of its own, on the
PostgreSQL of DATABASE_URL; start the API parts with PUBLISH_WORKER=off. Any number may run: a post
is never published twice. SIGINT, SIGTERM or SIGHUP (to it or to npm) stops it cleanly.
`);

/** `npm run worker`: the social publisher (with token renewal and webhook deliveries) as a process of its own. */
void runMain(
  'The publisher worker',
  async (config, logger) => {
    const worker = await startPublisherWorker(config, logger);
    logger.info('publisher worker running');
    return worker;
  },
  { refuse: publisherWorkerRefusal },
);
