import { buildSubgraphSchema, printSubgraphSchema, type GraphQLResolverMap } from '@apollo/subgraph';
import { MapperKind, mapSchema, printSchemaWithDirectives } from '@graphql-tools/utils';
import { GraphQLObjectType, type GraphQLSchema } from 'graphql';
import { gql } from 'graphql-tag';
import { buildSchema, createResolversMap, type ClassType, type NonEmptyArray } from 'type-graphql';
import { traceResolvers } from '../observability/tracing.js';
import { applyShield, mutationRulesOf, type MutationRules, type RuleTree } from './shield.js';

const FEDERATION_LINK = `
  extend schema
    @link(url: "https://specs.apollo.dev/federation/v2.7", import: ["@key", "@shareable", "@external", "@requires", "@provides"])
`;

/** Descriptions of the root types, which type-graphql has no option for; every subgraph gives the same ones. */
const ROOT_TYPE_DESCRIPTIONS: Record<string, string> = {
  Query: 'What can be read: contacts, posts, surveys and everything around them (each field says who may see what)',
  Mutation:
    'What can be changed: each mutation runs in one transaction, writes its audit event with it, and answers the changed object',
  Subscription:
    'What can be followed as it happens: each stream resumes after a cursor (`after`) and is authorised for every event',
};

/**
 * type-graphql insists on a PubSub once a schema has a subscription, even where every
 * `@Subscription` brings its own `subscribe` (ours follow a service's event feed,
 * lib/data/event-feed.ts): this one is never used, and says so if it ever were.
 */
const NO_PUB_SUB = {
  publish() {
    throw new Error('Subscriptions follow event feeds; nothing publishes through type-graphql');
  },
  subscribe(): never {
    throw new Error('Every @Subscription names its own subscribe function');
  },
};

/** The schema with its root types described (the explorers show these first). */
function describeRootTypes(schema: GraphQLSchema): GraphQLSchema {
  return mapSchema(schema, {
    [MapperKind.ROOT_OBJECT]: (type) =>
      new GraphQLObjectType({ ...type.toConfig(), description: type.description ?? ROOT_TYPE_DESCRIPTIONS[type.name] }),
  });
}

export interface SubgraphDefinition {
  resolvers: NonEmptyArray<ClassType>;
  orphanedTypes?: ClassType[];
  /** `__resolveReference` per entity type (`<service>.references.ts`), as in type-graphql's federation example. */
  references?: EntityReferences<never>;
  rules: RuleTree;
}

/** How a subgraph finds the entities other subgraphs point at by key, each with the request's context. */
export type EntityReferences<Context> = Record<
  string,
  { __resolveReference(reference: { id: string }, context: Context): unknown }
>;

/**
 * Builds a Federation 2 subgraph schema from type-graphql classes: type-graphql makes the schema,
 * it is printed with its directives, and @apollo/subgraph rebuilds it with the federation fields.
 * Returns the bare schema (for `npm run schema`), the guarded one (served, over HTTP or in process;
 * its resolvers make spans while tracing is on), and the same shield's rules of the root mutation
 * fields, asked before an Idempotency-Key's replay.
 */
export async function buildFederatedSchema(
  definition: SubgraphDefinition,
): Promise<{ schema: GraphQLSchema; guarded: GraphQLSchema; mutationRules: MutationRules }> {
  const typeGraphQLSchema = describeRootTypes(
    await buildSchema({
      resolvers: definition.resolvers,
      orphanedTypes: definition.orphanedTypes,
      skipCheck: true,
      pubSub: NO_PUB_SUB,
      validate: { forbidUnknownValues: false },
      emitSchemaFile: false,
    }),
  );
  const resolvers = createResolversMap(typeGraphQLSchema) as GraphQLResolverMap<unknown>;
  for (const [typeName, reference] of Object.entries(definition.references ?? {})) {
    resolvers[typeName] = { ...(resolvers[typeName] as object), ...reference } as never;
  }
  const schema = buildSubgraphSchema([
    { typeDefs: gql(`${FEDERATION_LINK}\n${printSchemaWithDirectives(typeGraphQLSchema)}`), resolvers },
  ]);
  return {
    schema,
    guarded: traceResolvers(applyShield(schema, definition.rules)),
    mutationRules: mutationRulesOf(schema, definition.rules),
  };
}

export function printSdl(schema: GraphQLSchema): string {
  return `${printSubgraphSchema(schema).trim()}\n`;
}
