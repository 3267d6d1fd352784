import 'reflect-metadata';
import { startGateway } from '#gateway/gateway.js';
import { REST_OPERATION_TEXTS } from '#rest-adapters/operation-texts.js';
import type { Config } from '#lib/config.js';
import { httpClient } from '#lib/rest/graphql-client.js';
import { Identity } from '#lib/identity.js';
import { exitWithHelpIfAsked } from '#lib/cli.js';
import { runMain } from '#lib/process/main.js';
import type { Deps, RunningPart } from '#lib/service.js';
import { startContactsRest } from '#rest-adapters/contacts/index.js';
import { startSocialRest } from '#rest-adapters/social/index.js';
import { startSurveysRest } from '#rest-adapters/surveys/index.js';
import { startContactsSubgraph } from '#subgraphs/contacts/index.js';
import { startSocialSubgraph } from '#subgraphs/social/index.js';
import { startSurveysSubgraph } from '#subgraphs/surveys/index.js';

/**
 * `node dist/scripts/part.js <part>`: one part of the platform in its own process, as
 * docker-compose.yml deploys them. The gateway finds subgraphs through `*_SUBGRAPH_URL` and the
 * REST adapters find the gateway through `GATEWAY_URL`.
 */
const PARTS: Record<string, (deps: Deps) => Promise<RunningPart>> = {
  'social-subgraph': (deps) => startSocialSubgraph(deps, { port: deps.config.ports.socialSubgraph }),
  'surveys-subgraph': (deps) => startSurveysSubgraph(deps, { port: deps.config.ports.surveysSubgraph }),
  'contacts-subgraph': (deps) => startContactsSubgraph(deps, { port: deps.config.ports.contactsSubgraph }),
  gateway: (deps) =>
    startGateway(deps, {
      port: deps.config.ports.gateway,
      subgraphUrls: subgraphUrls(deps.config),
      restOperations: REST_OPERATION_TEXTS,
    }),
  'social-rest': (deps) =>
    startSocialRest(deps, { port: deps.config.ports.socialRest, client: gatewayClient(deps.config) }),
  'surveys-rest': (deps) =>
    startSurveysRest(deps, { port: deps.config.ports.surveysRest, client: gatewayClient(deps.config) }),
  'contacts-rest': (deps) =>
    startContactsRest(deps, { port: deps.config.ports.contactsRest, client: gatewayClient(deps.config) }),
};

function subgraphUrls(config: Config): Record<string, string> {
  const urls = {
    social: config.env.SOCIAL_SUBGRAPH_URL,
    surveys: config.env.SURVEYS_SUBGRAPH_URL,
    contacts: config.env.CONTACTS_SUBGRAPH_URL,
  };
  return Object.fromEntries(Object.entries(urls).filter((entry): entry is [string, string] => entry[1] !== undefined));
}

function gatewayClient(config: Config) {
  if (!config.env.GATEWAY_URL)
    throw new Error('GATEWAY_URL is required for a REST adapter running apart from the gateway');
  return httpClient(config.env.GATEWAY_URL, config.env.SUBGRAPH_TOKEN[0]);
}

exitWithHelpIfAsked(`
usage: node dist/scripts/part.js <${Object.keys(PARTS).join('|')}>

Runs one part of the platform in its own process, as docker-compose.yml and Kubernetes deploy them.
The gateway finds the subgraphs through *_SUBGRAPH_URL; a REST service finds the gateway through GATEWAY_URL.
`);

const name = process.argv[2] ?? '';
const startPart = PARTS[name];
if (!startPart) {
  console.error(`usage: node dist/scripts/part.js <${Object.keys(PARTS).join('|')}>`);
  process.exit(2);
}
void runMain(name, async (config, logger) => {
  const part = await startPart({ config, logger, identity: await Identity.create(config) });
  console.log(`${part.name} listening on ${part.url}`);
  return part;
});
