import { ApolloServer, type ApolloServerPlugin, type BaseContext } from '@apollo/server';
import {
  ApolloServerPluginCacheControlDisabled,
  ApolloServerPluginInlineTraceDisabled,
  ApolloServerPluginLandingPageDisabled,
} from '@apollo/server/plugin/disabled';
import { buildSubgraphSchema, printSubgraphSchema, type GraphQLResolverMap } from '@apollo/subgraph';
import { expressMiddleware } from '@as-integrations/express5';
import { MapperKind, mapSchema, printSchemaWithDirectives } from '@graphql-tools/utils';
import express from 'express';
import { GraphQLObjectType, type GraphQLSchema } from 'graphql';
import { gql } from 'graphql-tag';
import { buildSchema, createResolversMap, type ClassType, type NonEmptyArray } from 'type-graphql';
import type { Config } from './config.js';
import { formatGraphQLError } from './errors.js';
import { localSubgraph, type LocalSubgraph, type SubgraphRequest } from './local-subgraph.js';
import { queryLimits } from './query-limits.js';
import { requireSubgraphToken } from './subgraph-token.js';
import { subgraphClientOf } from './client-address.js';
import { databaseAnswers, openDatabase, type DatabaseOptions, type EntityManager, type Orm } from './database.js';
import { operationTelemetry } from './graphql-telemetry.js';
import { addProbes, graphqlRequestErrorHandler, listen, type RunningServer } from './http.js';
import { assignRequestId, httpLogger, type Logger } from './logger.js';
import { httpMetrics } from './metrics.js';
import type { Deps, RunningPart } from './service.js';
import { applyShield, type RuleTree } from './shield.js';
import { resumeTrace, traceRequests, traceResolvers } from './tracing.js';

const FEDERATION_LINK = `
  extend schema
    @link(url: "https://specs.apollo.dev/federation/v2.7", import: ["@key", "@shareable", "@external", "@requires", "@provides"])
`;

/** Descriptions of the root types, which type-graphql has no option for; every subgraph gives the same ones. */
const ROOT_TYPE_DESCRIPTIONS: Record<string, string> = {
  Query: 'What can be read: contacts, posts, surveys and everything around them (each field says who may see what)',
  Mutation: 'What can be changed: each mutation runs in one transaction, writes its audit event with it, and answers the changed object',
};

/** The schema with its root types described (the explorers show these first). */
function describeRootTypes(schema: GraphQLSchema): GraphQLSchema {
  return mapSchema(schema, {
    [MapperKind.ROOT_OBJECT]: (type) => new GraphQLObjectType({ ...type.toConfig(), description: type.description ?? ROOT_TYPE_DESCRIPTIONS[type.name] }),
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
export type EntityReferences<Context> = Record<string, { __resolveReference(reference: { id: string }, context: Context): unknown }>;

/**
 * Builds a Federation 2 subgraph schema from type-graphql classes: type-graphql makes the schema,
 * it is printed with its directives, and @apollo/subgraph rebuilds it with the federation fields.
 * Returns the bare schema (for `npm run schema`) and the guarded one (served, over HTTP or in process;
 * its resolvers make spans while tracing is on).
 */
export async function buildFederatedSchema(definition: SubgraphDefinition): Promise<{ schema: GraphQLSchema; guarded: GraphQLSchema }> {
  const typeGraphQLSchema = describeRootTypes(
    await buildSchema({
      resolvers: definition.resolvers,
      orphanedTypes: definition.orphanedTypes,
      skipCheck: true,
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
  return { schema, guarded: traceResolvers(applyShield(schema, definition.rules)) };
}

export function printSdl(schema: GraphQLSchema): string {
  return `${printSubgraphSchema(schema).trim()}\n`;
}

export interface SubgraphServerOptions<Context extends BaseContext> {
  name: string;
  schema: GraphQLSchema;
  config: Config;
  logger: Logger;
  port: number;
  context: (req: SubgraphRequest) => Promise<Context>;
  isReady: () => Promise<boolean>;
}

/** Serves a subgraph schema over HTTP at `/graphql`, with probes and a drain on close. */
export async function serveSubgraph<Context extends BaseContext>(options: SubgraphServerOptions<Context>): Promise<RunningServer> {
  const { config, logger, name } = options;
  const log = logger.child({ component: `${name}-subgraph` });
  const app = express();
  app.disable('x-powered-by');
  app.use(assignRequestId, httpMetrics(`${name}-subgraph`, ['/graphql']), traceRequests(`${name}-subgraph`, ['/graphql']));
  let shuttingDown = false;
  addProbes(app, async () => !shuttingDown && (await options.isReady()));

  const limits = queryLimits(config);
  const apollo = new ApolloServer<Context>({
    schema: options.schema,
    // The platform stops its parts itself, in order, on SIGINT/SIGTERM (scripts/start.ts). Apollo's own
    // signal handlers would stop this server behind that back, and the platform's close then hangs.
    stopOnTerminationSignals: false,
    introspection: !config.isProduction,
    includeStacktraceInErrorResponses: false,
    // The gateway's limits on this port too, so that calling a subgraph directly is no way around them.
    validationRules: limits.validationRules,
    formatError: (formatted, error) =>
      formatGraphQLError(formatted, error, (internal) => log.error({ err: internal }, 'unexpected error in resolver')),
    // No cache hints are used; the cache-control plugin would otherwise time every resolved field.
    plugins: [
      ...(limits.plugins as unknown as ApolloServerPlugin<Context>[]),
      ApolloServerPluginLandingPageDisabled(),
      ApolloServerPluginInlineTraceDisabled(),
      ApolloServerPluginCacheControlDisabled(),
      operationTelemetry<Context>({ part: `${name}-subgraph`, span: true }),
    ],
  });
  await apollo.start();

  app.use(
    '/graphql',
    httpLogger(logger, `${name}-subgraph`),
    requireSubgraphToken(config.env.SUBGRAPH_TOKEN),
    express.json({ limit: config.env.BODY_LIMIT_BYTES }),
    resumeTrace,
    expressMiddleware(apollo, {
      context: async ({ req }) => options.context({ headers: req.headers, id: req.id, client: subgraphClientOf(req, Boolean(config.env.SUBGRAPH_TOKEN)) }),
    }),
  );
  app.use(graphqlRequestErrorHandler(log));

  // SUBGRAPH_HOST, loopback by default: only the gateway calls a subgraph (production wants SUBGRAPH_TOKEN beyond loopback).
  const running = await listen(app, options.port, config.env.SUBGRAPH_HOST, '/graphql');
  return {
    ...running,
    close: async () => {
      shuttingDown = true;
      await running.close();
      await apollo.stop();
    },
  };
}

/** Where a subgraph service listens, and who watches its SQL (tests count statements). */
export interface SubgraphListenOptions {
  port: number;
  onQuery?: (sql: string) => void;
}

/** What a service keeps for its whole life (`<service>.runtime.ts`): settings derived from Config, and clients. */
export interface ServiceRuntime {
  close(): Promise<void>;
}

/**
 * The one skeleton of a subgraph service: its database (entities and migrations), its schema
 * (`<service>.subgraph.ts`), its runtime and how one request's context is made on it.
 */
export interface SubgraphServiceOptions<Runtime extends ServiceRuntime, Context extends BaseContext> extends SubgraphListenOptions {
  service: DatabaseOptions['service'];
  entities: DatabaseOptions['entities'];
  migrations: DatabaseOptions['migrations'];
  definition: SubgraphDefinition;
  /** Made once the database is open (so a failed start leaves no client behind); closed before it. */
  runtime: (orm: Orm) => Promise<Runtime>;
  /** One request's context (`<service>.context.ts`): the caller, services bound to it and to `em`, the request's loaders. */
  context: (runtime: Runtime, em: EntityManager, req: SubgraphRequest) => Promise<Context>;
}

export interface RunningSubgraph<Runtime = ServiceRuntime> extends RunningPart {
  orm: Orm;
  runtime: Runtime;
  /** The same schema and context as its HTTP server, for a gateway in this process (no HTTP between them). */
  local: LocalSubgraph;
}

/** Opens the service's database (running its migrations), makes its runtime, builds its schema and serves it. */
export async function startSubgraphService<Runtime extends ServiceRuntime, Context extends BaseContext>(
  deps: Deps,
  options: SubgraphServiceOptions<Runtime, Context>,
): Promise<RunningSubgraph<Runtime>> {
  const { config, logger } = deps;
  const orm = await openDatabase(config, logger, {
    service: options.service,
    entities: options.entities,
    migrations: options.migrations,
    onQuery: options.onQuery,
  });
  const closers: Array<() => Promise<void>> = [() => orm.close()];
  const closeAll = async () => {
    for (const close of [...closers].reverse()) await close();
  };
  try {
    const runtime = await options.runtime(orm);
    closers.push(() => runtime.close());
    const { guarded } = await buildFederatedSchema(options.definition);
    const contextOf = (req: SubgraphRequest) => options.context(runtime, orm.em.fork(), req);
    const server = await serveSubgraph({
      name: options.service,
      schema: guarded,
      config,
      logger,
      port: options.port,
      context: contextOf,
      isReady: () => databaseAnswers(orm),
    });
    closers.push(() => server.close());
    const local = localSubgraph(guarded, contextOf, logger.child({ component: `${options.service}-subgraph` }), `${options.service}-subgraph`);
    return { name: `${options.service}-subgraph`, url: server.url, orm, runtime, local, close: closeAll };
  } catch (error) {
    await closeAll();
    throw error;
  }
}
