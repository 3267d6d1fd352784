import 'reflect-metadata';
import cluster from 'node:cluster';
import { exitWithHelpIfAsked } from '#lib/cli.js';
import { configOrExit, runMain } from '#lib/process/main.js';
import { createLogger } from '#lib/observability/logger.js';
import { runWorkers, WORKER_NUMBER } from '#lib/process/workers.js';
import { startPlatform } from './platform.js';

exitWithHelpIfAsked(
  `
usage: npm start            (node dist/scripts/start.js)

Starts the whole platform: the three subgraphs, the gateway (with Apollo Sandbox and GraphiQL in
development) and the three REST services, then prints their URLs. Without DATABASE_URL the data lives
in embedded PostgreSQL (PGlite) under DATA_DIR (./.data), in this one process; on PostgreSQL,
WEB_CONCURRENCY worker processes (default: one per CPU) each serve every port. Ctrl-C, SIGTERM or SIGHUP
(to it or to npm) stops it cleanly, draining requests; so does its parent process going away. Settings come ` +
    `from the environment (README, Configuration), e.g. GATEWAY_PORT=5000 npm start.
`,
);

/** `npm start`: every subgraph, the gateway and every REST adapter in one process, or in each of several workers. */
const primaryConfig = cluster.isPrimary ? configOrExit() : undefined;
if (primaryConfig && primaryConfig.workers > 1) void runWorkers(primaryConfig, createLogger(primaryConfig));
else
  void runMain('The platform', async (config, logger) => {
    const platform = await startPlatform(config, logger);
    const lines = [
      `gateway (GraphQL, Sandbox)  ${platform.gateway.url}`,
      ...(config.isProduction
        ? []
        : [`GraphiQL (works offline)    ${platform.gateway.url.replace(/\/graphql$/, '/graphiql')}`]),
      `social REST                 ${platform.rest.social.url}`,
      `surveys REST                ${platform.rest.surveys.url}`,
      `contacts REST               ${platform.rest.contacts.url}`,
      `social subgraph             ${platform.subgraphs.social.url}`,
      `surveys subgraph            ${platform.subgraphs.surveys.url}`,
      `contacts subgraph           ${platform.subgraphs.contacts.url}`,
    ];
    const database = config.env.DATABASE_URL
      ? `PostgreSQL, ${config.workers} worker${config.workers > 1 ? 's' : ''}`
      : `embedded PGlite in ${config.dataDir}`;
    // In a cluster every worker serves the same ports; the first says so for all.
    const number = Number(process.env[WORKER_NUMBER] ?? 1);
    const logs =
      config.logFormat === 'pretty'
        ? 'Logs: readable lines (a terminal); LOG_FORMAT=json for JSON.'
        : 'Logs: one JSON object per line; LOG_FORMAT=pretty for readable lines.';
    if (number === 1) console.log(`\nPlatform running (${database}):\n  ${lines.join('\n  ')}\n${logs}\n`);
    return platform;
  });
