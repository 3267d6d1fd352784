import { composeServices } from '@apollo/composition';
import { parse } from 'graphql';
import type { Config } from '#lib/config.js';
import { buildFederatedSchema, printSdl, type SubgraphDefinition } from '#lib/subgraph/federated-schema.js';
import { contactsSubgraph } from '#subgraphs/contacts/contacts.subgraph.js';
import { socialSubgraph } from '#subgraphs/social/social.subgraph.js';
import { surveysSubgraph } from '#subgraphs/surveys/surveys.subgraph.js';

export interface ComposedSupergraph {
  subgraphs: { name: string; sdl: string }[];
  supergraphSdl: string;
}

/** The subgraphs by name, with the URL written into the supergraph (the default ports). */
function definitions(config: Config): { name: string; url: string; definition: SubgraphDefinition }[] {
  return [
    { name: 'social', url: `http://localhost:${config.ports.socialSubgraph}/graphql`, definition: socialSubgraph() },
    { name: 'surveys', url: `http://localhost:${config.ports.surveysSubgraph}/graphql`, definition: surveysSubgraph() },
    {
      name: 'contacts',
      url: `http://localhost:${config.ports.contactsSubgraph}/graphql`,
      definition: contactsSubgraph(config),
    },
  ];
}

/** Prints every subgraph's SDL from the code and composes them with @apollo/composition. */
export async function composeSupergraph(config: Config): Promise<ComposedSupergraph> {
  const subgraphs = [];
  for (const { name, url, definition } of definitions(config)) {
    const { schema } = await buildFederatedSchema(definition);
    subgraphs.push({ name, url, sdl: printSdl(schema) });
  }
  const result = composeServices(subgraphs.map(({ name, url, sdl }) => ({ name, url, typeDefs: parse(sdl) })));
  if (result.errors?.length) {
    throw new Error(`Composition failed:\n${result.errors.map((error) => `  - ${error.message}`).join('\n')}`);
  }
  return {
    subgraphs: subgraphs.map(({ name, sdl }) => ({ name, sdl })),
    supergraphSdl: `${(result.supergraphSdl ?? '').trim()}\n`,
  };
}
