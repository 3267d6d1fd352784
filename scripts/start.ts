import 'reflect-metadata';
import { runMain } from '../lib/main.js';
import { startPlatform } from './platform.js';

/** `npm start`: every subgraph, the gateway and every REST adapter in one process. */
void runMain('The platform', async (config, logger) => {
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
  const database = config.env.DATABASE_URL ? 'PostgreSQL' : `embedded PGlite in ${config.dataDir}`;
  console.log(`\nPlatform running (${database}):\n  ${lines.join('\n  ')}\n`);
  return platform;
});
