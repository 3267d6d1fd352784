import 'reflect-metadata';
import { startGateway } from '../gateway/gateway.js';
import { loadConfig, type Config } from '../lib/config.js';
import { httpClient } from '../lib/graphql-client.js';
import { Identity } from '../lib/identity.js';
import { createLogger } from '../lib/logger.js';
import type { RunningPart } from '../lib/service.js';
import { startContactsRest } from '../rest-adapters/contacts/index.js';
import { startSocialRest } from '../rest-adapters/social/index.js';
import { startSurveysRest } from '../rest-adapters/surveys/index.js';
import { startContactsSubgraph } from '../subgraphs/contacts/index.js';
import { startSocialSubgraph } from '../subgraphs/social/index.js';
import { startSurveysSubgraph } from '../subgraphs/surveys/index.js';

/**
 * `node dist/scripts/part.js <part>`: one part of the platform in its own process, as
 * docker-compose.yml deploys them. The gateway finds subgraphs through `*_SUBGRAPH_URL` and the
 * REST adapters find the gateway through `GATEWAY_URL`.
 */
const PARTS: Record<string, (config: Config) => Promise<RunningPart>> = {
  'social-subgraph': async (config) => startSocialSubgraph(await deps(config), { port: config.ports.socialSubgraph }),
  'surveys-subgraph': async (config) => startSurveysSubgraph(await deps(config), { port: config.ports.surveysSubgraph }),
  'contacts-subgraph': async (config) => startContactsSubgraph(await deps(config), { port: config.ports.contactsSubgraph }),
  gateway: async (config) =>
    startGateway(await deps(config), {
      port: config.ports.gateway,
      subgraphUrls: Object.fromEntries(
        Object.entries({
          social: config.env.SOCIAL_SUBGRAPH_URL,
          surveys: config.env.SURVEYS_SUBGRAPH_URL,
          contacts: config.env.CONTACTS_SUBGRAPH_URL,
        }).filter((entry): entry is [string, string] => entry[1] !== undefined),
      ),
    }),
  'social-rest': async (config) => startSocialRest(await deps(config), { port: config.ports.socialRest, client: gatewayClient(config) }),
  'surveys-rest': async (config) => startSurveysRest(await deps(config), { port: config.ports.surveysRest, client: gatewayClient(config) }),
  'contacts-rest': async (config) => startContactsRest(await deps(config), { port: config.ports.contactsRest, client: gatewayClient(config) }),
};

async function deps(config: Config) {
  const logger = createLogger(config);
  return { config, logger, identity: await Identity.create(config) };
}

function gatewayClient(config: Config) {
  if (!config.env.GATEWAY_URL) throw new Error('GATEWAY_URL is required for a REST adapter running apart from the gateway');
  return httpClient(config.env.GATEWAY_URL);
}

async function main(): Promise<void> {
  const name = process.argv[2] ?? '';
  const start = PARTS[name];
  if (!start) {
    console.error(`usage: node dist/scripts/part.js <${Object.keys(PARTS).join('|')}>`);
    process.exit(2);
  }
  const config = loadConfig();
  const part = await start(config);
  console.log(`${part.name} listening on ${part.url}`);
  const stop = async () => {
    await part.close();
    process.exit(0);
  };
  process.once('SIGINT', () => void stop());
  process.once('SIGTERM', () => void stop());
}

main().catch((error: unknown) => {
  console.error(error instanceof Error ? error.message : error);
  process.exit(1);
});
