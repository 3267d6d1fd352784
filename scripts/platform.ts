import 'reflect-metadata';
import type { Config } from '#lib/config.js';
import { httpClient } from '#lib/rest/graphql-client.js';
import { Identity } from '#lib/identity.js';
import { openWaitingPort, type WaitingPort } from '#lib/http/http.js';
import type { Logger } from '#lib/observability/logger.js';
import type { RunningPart } from '#lib/service.js';
import type { RunningSubgraph } from '#lib/subgraph/subgraph.js';
import { startGateway, type RunningGateway } from '#gateway/gateway.js';
import { REST_OPERATION_TEXTS } from '#rest-adapters/operation-texts.js';
import { startContactsRest } from '#rest-adapters/contacts/index.js';
import { startSocialRest } from '#rest-adapters/social/index.js';
import { startSurveysRest } from '#rest-adapters/surveys/index.js';
import type { ContactsRuntime } from '#subgraphs/contacts/contacts.runtime.js';
import { contactExportStream } from '#subgraphs/contacts/export/contact-export.service.js';
import { startContactsSubgraph } from '#subgraphs/contacts/index.js';
import { startSocialSubgraph } from '#subgraphs/social/index.js';
import type { SocialRuntime } from '#subgraphs/social/social.runtime.js';
import { startSurveysSubgraph } from '#subgraphs/surveys/index.js';
import type { SurveysRuntime } from '#subgraphs/surveys/surveys.runtime.js';

export interface Platform {
  identity: Identity;
  gateway: RunningGateway;
  subgraphs: {
    social: RunningSubgraph<SocialRuntime>;
    surveys: RunningSubgraph<SurveysRuntime>;
    contacts: RunningSubgraph<ContactsRuntime>;
  };
  rest: { social: RunningPart; surveys: RunningPart; contacts: RunningPart };
  /** Stops everything: REST adapters, then the gateway, then subgraphs (servers, then databases). */
  close(): Promise<void>;
}

export interface PlatformOptions {
  /** Sees every SQL statement of every subgraph (tests pin statement counts with it). */
  onQuery?: (service: string, sql: string) => void;
}

/** Starts the whole platform in this process, as `npm start` does and the integration tests do. */
export async function startPlatform(config: Config, logger: Logger, options: PlatformOptions = {}): Promise<Platform> {
  const identity = await Identity.create(config);
  const deps = { config, logger, identity };
  const started: RunningPart[] = [];
  const track = <Part extends RunningPart>(part: Part): Part => {
    started.push(part);
    return part;
  };
  const close = async () => {
    for (const part of started.reverse()) await part.close();
  };
  const observe = (service: string) => (options.onQuery ? (sql: string) => options.onQuery?.(service, sql) : undefined);

  try {
    // Open before the subgraphs, which wait for the database: every port answers its probes meanwhile.
    // Tracked so that a start that fails closes them; once a part serves one, closing the part closes it.
    const opened = (waiting: WaitingPort) => {
      track({ name: `waiting port ${waiting.port}`, url: '', close: () => waiting.close() });
      return waiting;
    };
    const [gatewayPort, socialRestPort, surveysRestPort, contactsRestPort] = await Promise.all([
      openWaitingPort(config.ports.gateway, config.env.HOST, '/graphql').then(opened),
      ...[config.ports.socialRest, config.ports.surveysRest, config.ports.contactsRest].map((port) =>
        openWaitingPort(port, config.env.HOST).then(opened),
      ),
    ]);
    const [social, surveys, contacts] = await Promise.all([
      startSocialSubgraph(deps, { port: config.ports.socialSubgraph, onQuery: observe('social') }).then(track),
      startSurveysSubgraph(deps, { port: config.ports.surveysSubgraph, onQuery: observe('surveys') }).then(track),
      startContactsSubgraph(deps, { port: config.ports.contactsSubgraph, onQuery: observe('contacts') }).then(track),
    ]);
    // A subgraph of this process is executed in it (no HTTP); one `*_SUBGRAPH_URL` sends its calls elsewhere.
    const elsewhere = {
      social: config.env.SOCIAL_SUBGRAPH_URL,
      surveys: config.env.SURVEYS_SUBGRAPH_URL,
      contacts: config.env.CONTACTS_SUBGRAPH_URL,
    };
    const here = { social, surveys, contacts };
    const gateway = track(
      await startGateway(deps, {
        port: gatewayPort,
        subgraphUrls: Object.fromEntries(
          Object.entries(here).map(([name, subgraph]) => [name, elsewhere[name as keyof typeof here] ?? subgraph.url]),
        ),
        localSubgraphs: Object.fromEntries(
          Object.entries(here)
            .filter(([name]) => !elsewhere[name as keyof typeof here])
            .map(([name, subgraph]) => [name, subgraph.local]),
        ),
        restOperations: REST_OPERATION_TEXTS,
      }),
    );
    const client = config.env.GATEWAY_URL
      ? httpClient(config.env.GATEWAY_URL, config.env.SUBGRAPH_TOKEN[0])
      : gateway.client;
    const [socialRest, surveysRest, contactsRest] = await Promise.all([
      startSocialRest(deps, { port: socialRestPort, client }).then(track),
      startSurveysRest(deps, { port: surveysRestPort, client }).then(track),
      startContactsRest(deps, {
        port: contactsRestPort,
        client,
        contactsSubgraphUrl: contacts.url,
        contactExports: (grant) => contactExportStream(contacts.orm, contacts.runtime.exports, grant),
      }).then(track),
    ]);
    return {
      identity,
      gateway,
      subgraphs: { social, surveys, contacts },
      rest: { social: socialRest, surveys: surveysRest, contacts: contactsRest },
      close,
    };
  } catch (error) {
    await close();
    throw error;
  }
}
