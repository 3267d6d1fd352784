import 'reflect-metadata';
import { exitWithHelpIfAsked } from '../lib/cli.js';
import { runMain } from '../lib/main.js';
import { startPlatform } from './platform.js';

exitWithHelpIfAsked(`
usage: npm start            (node dist/scripts/start.js)

Starts the whole platform in this one process: the three subgraphs, the gateway (with Apollo Sandbox
and GraphiQL in development) and the three REST services, then prints their URLs. Without DATABASE_URL
the data lives in embedded PostgreSQL (PGlite) under DATA_DIR (./.data). Ctrl-C or SIGTERM stops it
cleanly. Settings come from the environment (README, Configuration), e.g. GATEWAY_PORT=5000 npm start.
`);

/** `npm start`: every subgraph, the gateway and every REST adapter in one process. */
void runMain('The platform', async (config, logger) => {
  const platform = await startPlatform(config, logger);
  const lines = [
    `gateway (GraphQL, Sandbox)  ${platform.gateway.url}`,
    ...(config.isProduction ? [] : [`GraphiQL (works offline)    ${platform.gateway.url.replace(/\/graphql$/, '/graphiql')}`]),
    `social REST                 ${platform.rest.social.url}`,
    `surveys REST                ${platform.rest.surveys.url}`,
    `contacts REST               ${platform.rest.contacts.url}`,
    `social subgraph             ${platform.subgraphs.social.url}`,
    `surveys subgraph            ${platform.subgraphs.surveys.url}`,
    `contacts subgraph           ${platform.subgraphs.contacts.url}`,
  ];
  const database = config.env.DATABASE_URL ? 'PostgreSQL' : `embedded PGlite in ${config.dataDir}`;
  console.log(`\nPlatform running (${database}):\n  ${lines.join('\n  ')}\n`);
  return platform;
});
