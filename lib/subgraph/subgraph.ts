import { ApolloServer, type ApolloServerPlugin, type BaseContext } from '@apollo/server';
import {
  ApolloServerPluginCacheControlDisabled,
  ApolloServerPluginInlineTraceDisabled,
  ApolloServerPluginLandingPageDisabled,
} from '@apollo/server/plugin/disabled';
import { expressMiddleware } from '@as-integrations/express5';
import { settleUrlParseWarning } from '../http/url-parse-warning.js';
import express from 'express';
import type { GraphQLSchema } from 'graphql';
import type { Config } from '../config.js';
import { subgraphClientOf } from '../http/client-address.js';
import { logConnectionBudget } from '../data/connection-budget.js';
import { databaseAnswers, openDatabase, type DatabaseOptions, type EntityManager, type Orm } from '../data/database.js';
import { addProbes, graphqlRequestErrorHandler, listen, type RunningServer } from '../http/http.js';
import {
  answersWithin,
  OutageWatch,
  outageAwarePlugin,
  serviceUnavailable,
  subgraphFaults,
  unavailableContext,
  type SubgraphFaults,
} from '../http/availability.js';
import { untilDatabaseAnswers } from './startup.js';
import { refuseCrossSiteRequests } from '../http/csrf.js';
import { checkJsonBody, refuseUnstorableGraphQLText } from '../http/input.js';
import { operationTelemetry } from '../observability/graphql-telemetry.js';
import { answerExtensionsOf, localSubgraph, type LocalSubgraph, type SubgraphRequest } from './local-subgraph.js';
import { idempotencyPlugin, markMadeOn, type IdempotentContexts } from './idempotent-operations.js';
import { assignRequestId, httpLogger, type Logger } from '../observability/logger.js';
import { httpMetrics } from '../observability/metrics.js';
import { queryLimits } from './query-limits.js';
import { requireSubgraphToken } from '../http/subgraph-token.js';
import { resumeTrace, traceRequests } from '../observability/tracing.js';
import type { Deps, RunningPart } from '../service.js';
import { buildFederatedSchema, type SubgraphDefinition } from './federated-schema.js';
import { eventStreamSubscriptions } from './subscription-sse.js';
import { subscriptionsOf, type Subscriptions } from './subscriptions.js';

export interface SubgraphServerOptions<Context extends BaseContext> {
  name: string;
  schema: GraphQLSchema;
  config: Config;
  logger: Logger;
  port: number;
  context: (req: SubgraphRequest) => Promise<Context>;
  isReady: () => Promise<boolean>;
  /**
   * Plain HTTP routes beside `/graphql`, for what must not travel through GraphQL (an export's
   * bytes): each request is authorized by a grant a GraphQL operation handed out.
   */
  routes?: express.Router;
  /** What a mutation with an Idempotency-Key runs on (lib/subgraph/idempotent-operations.ts); none: keys are not kept. */
  idempotency?: IdempotentContexts;
}

/** Serves a subgraph schema over HTTP at `/graphql`, with probes and a drain on close. */
export async function serveSubgraph<Context extends BaseContext>(
  options: SubgraphServerOptions<Context>,
): Promise<RunningServer> {
  const port = await openSubgraphPort(options);
  try {
    await port.serve(options);
  } catch (error) {
    await port.close();
    throw error;
  }
  return port;
}

/**
 * A subgraph's port, open before its database is: `/healthz` answers 200 at once, `/readyz` 503
 * and `/graphql` 503 (with `Retry-After`) until `serve` gives it its schema, so a start that waits
 * for PostgreSQL is alive to its probes, and not ready.
 */
export interface SubgraphPort extends RunningServer {
  /** How this subgraph answers faults (an outage is a 503, a bug is masked): the same in process. */
  faults: SubgraphFaults;
  serve<Context extends BaseContext>(
    options: Pick<SubgraphServerOptions<Context>, 'schema' | 'context' | 'isReady' | 'routes' | 'idempotency'>,
  ): Promise<void>;
}

export async function openSubgraphPort(
  options: Pick<SubgraphServerOptions<BaseContext>, 'name' | 'config' | 'logger' | 'port'>,
): Promise<SubgraphPort> {
  const { config, logger, name } = options;
  settleUrlParseWarning();
  const log = logger.child({ component: `${name}-subgraph` });
  const app = express();
  app.disable('x-powered-by');
  // No ETag: GraphQL answers go to POSTs that no cache revalidates, and Express would hash every body.
  app.disable('etag');
  app.use(
    assignRequestId,
    httpMetrics(`${name}-subgraph`, ['/graphql']),
    traceRequests(`${name}-subgraph`, ['/graphql']),
  );
  let shuttingDown = false;
  let isReady: (() => Promise<boolean>) | undefined;
  let graphql: express.RequestHandler | undefined;
  let routes: express.RequestHandler | undefined;
  let apollo: ApolloServer<never> | undefined;
  let subscriptions: Subscriptions | undefined;
  const outage = new OutageWatch();
  const databaseAnswers = async () => {
    const answers = isReady ? await isReady() : false;
    if (!answers) outage.markDown();
    return answers;
  };
  const faults = subgraphFaults(log, outage, databaseAnswers);
  addProbes(app, async () => !shuttingDown && isReady !== undefined && (await databaseAnswers()));
  app.use('/graphql', (req, res, next) => {
    if (graphql) return graphql(req, res, next);
    const starting = serviceUnavailable();
    res
      .status(503)
      .set('retry-after', String(starting.retryAfter))
      .json({
        errors: [
          { message: 'The service is starting: its database is not ready yet', extensions: starting.extensions },
        ],
      });
  });
  app.use((req, res, next) => (routes ? routes(req, res, next) : next()));
  app.use(graphqlRequestErrorHandler(log));
  // SUBGRAPH_HOST, loopback by default: only the gateway calls a subgraph (production wants SUBGRAPH_TOKEN beyond loopback).
  const running = await listen(app, options.port, config.env.SUBGRAPH_HOST, '/graphql');
  const limits = queryLimits(config);

  return {
    ...running,
    faults,
    async serve<Context extends BaseContext>(
      served: Pick<SubgraphServerOptions<Context>, 'schema' | 'context' | 'isReady' | 'routes' | 'idempotency'>,
    ) {
      const server = new ApolloServer<Context>({
        schema: served.schema,
        // The platform stops its parts itself, in order, on SIGINT/SIGTERM (scripts/start.ts). Apollo's own
        // signal handlers would stop this server behind that back, and the platform's close then hangs.
        stopOnTerminationSignals: false,
        introspection: !config.isProduction,
        includeStacktraceInErrorResponses: false,
        // `refuseCrossSiteRequests` below, as on the gateway.
        csrfPrevention: false,
        // The gateway's limits on this port too, so that calling a subgraph directly is no way around them.
        validationRules: limits.validationRules,
        parseOptions: limits.parseOptions,
        formatError: (formatted, error) => faults.formatError(formatted, error),
        // No cache hints are used; the cache-control plugin would otherwise time every resolved field.
        plugins: [
          ...(limits.plugins as unknown as ApolloServerPlugin<Context>[]),
          ApolloServerPluginLandingPageDisabled(),
          ApolloServerPluginInlineTraceDisabled(),
          ApolloServerPluginCacheControlDisabled(),
          outageAwarePlugin<Context>(faults),
          operationTelemetry<Context>({ part: `${name}-subgraph`, span: true }),
          answerExtensionsPlugin<Context>(),
          ...(served.idempotency
            ? [idempotencyPlugin<Context>(served.idempotency, (error) => faults.formatError(error.toJSON(), error))]
            : []),
        ],
      });
      await server.start();
      apollo = server as unknown as ApolloServer<never>;
      const requestOf = (req: express.Request): SubgraphRequest => ({
        headers: req.headers,
        id: req.id,
        client: subgraphClientOf(req, config.env.SUBGRAPH_TOKEN.length > 0),
      });
      // Subscriptions over SSE, for a gateway in another process: the same limits as queries.
      subscriptions = subscriptionsOf(served.schema, (request) => served.context(request).catch(unavailableContext), {
        faults,
        validationRules: limits.validationRules,
      });
      const handlers = express.Router();
      handlers.use(
        httpLogger(logger, `${name}-subgraph`),
        refuseCrossSiteRequests(config),
        requireSubgraphToken(config.env.SUBGRAPH_TOKEN),
        express.json({ limit: config.env.BODY_LIMIT_BYTES, verify: checkJsonBody }),
        refuseUnstorableGraphQLText,
        resumeTrace,
        eventStreamSubscriptions(subscriptions.subscribe, requestOf),
        expressMiddleware(server, {
          context: async ({ req }) => served.context(requestOf(req)).catch(unavailableContext),
        }),
      );
      graphql = handlers;
      if (served.routes) {
        // The same gate as /graphql: only parts of the platform holding SUBGRAPH_TOKEN (when set) call these.
        routes = express
          .Router()
          .use(httpLogger(logger, `${name}-subgraph`), requireSubgraphToken(config.env.SUBGRAPH_TOKEN), served.routes);
      }
      isReady = served.isReady;
    },
    close: async () => {
      shuttingDown = true;
      // Open streams would hold the drain up to its timeout: they end now, and their clients resume elsewhere.
      await subscriptions?.close();
      await running.close();
      await apollo?.stop();
    },
  };
}

/** Adds what the request's context stated for the answer (`answerExtensionsOf`) to its `extensions`, as in process. */
function answerExtensionsPlugin<Context extends BaseContext>(): ApolloServerPlugin<Context> {
  return {
    async requestDidStart() {
      return {
        async willSendResponse({ contextValue, response }) {
          const stated = answerExtensionsOf(contextValue);
          if (!stated || response.body.kind !== 'single') return;
          const result = response.body.singleResult;
          result.extensions = { ...result.extensions, ...stated };
        },
      };
    },
  };
}

/** How long closing a service's database pool may take at shutdown. */
const DATABASE_CLOSE_TIMEOUT_MS = 3000;

/** Where a subgraph service listens, and who watches its SQL (tests count statements). */
export interface SubgraphListenOptions {
  port: number;
  onQuery?: (sql: string) => void;
}

/** What a service keeps for its whole life (`<service>.runtime.ts`): settings derived from Config, and clients. */
export interface ServiceRuntime {
  /** PostgreSQL connections the runtime opens beside the ORM's pool, by pool (the connection budget). */
  connections?: Record<string, number>;
  close(): Promise<void>;
}

/**
 * The one skeleton of a subgraph service: its database (entities and migrations), its schema
 * (`<service>.subgraph.ts`), its runtime and how one request's context is made on it.
 */
export interface SubgraphServiceOptions<
  Runtime extends ServiceRuntime,
  Context extends BaseContext,
> extends SubgraphListenOptions {
  service: DatabaseOptions['service'];
  entities: DatabaseOptions['entities'];
  migrations: DatabaseOptions['migrations'];
  definition: SubgraphDefinition;
  /** Made once the database is open (so a failed start leaves no client behind); closed before it. */
  runtime: (orm: Orm) => Promise<Runtime>;
  /** One request's context (`<service>.context.ts`): the caller, services bound to it and to `em`, the request's loaders. */
  context: (runtime: Runtime, em: EntityManager, req: SubgraphRequest) => Promise<Context>;
  /** Plain HTTP routes of the service beside `/graphql` (SubgraphServerOptions.routes). */
  routes?: (runtime: Runtime, orm: Orm) => express.Router;
}

export interface RunningSubgraph<Runtime = ServiceRuntime> extends RunningPart {
  orm: Orm;
  runtime: Runtime;
  /** The same schema, context and fault answers as its HTTP server, for a gateway in this process (no HTTP between them). */
  local: LocalSubgraph;
}

/** Opens the service's database (running its migrations), makes its runtime, builds its schema and serves it. */
export async function startSubgraphService<Runtime extends ServiceRuntime, Context extends BaseContext>(
  deps: Deps,
  options: SubgraphServiceOptions<Runtime, Context>,
): Promise<RunningSubgraph<Runtime>> {
  const { config, logger } = deps;
  // The port answers its probes while the database is awaited (alive, not ready).
  const port = await openSubgraphPort({ name: options.service, config, logger, port: options.port });
  let orm: Orm | undefined;
  let runtime: Runtime | undefined;
  // A connection cut off mid-transaction during an outage may never be handed back to the pool, and
  // closing the pool waits for it: the close is bounded, so shutdown after an outage still ends.
  const closeDatabase = async (opened: Orm) => {
    if (!(await answersWithin(() => opened.close().then(() => true), DATABASE_CLOSE_TIMEOUT_MS))) {
      logger.warn(
        { service: options.service },
        `database pool not closed within ${DATABASE_CLOSE_TIMEOUT_MS} ms (a connection lost in an outage); leaving it`,
      );
    }
  };
  const closeAll = async () => {
    await port.close();
    if (runtime) await runtime.close();
    if (orm) await closeDatabase(orm);
  };
  try {
    const database = await untilDatabaseAnswers(config, logger.child({ component: `${options.service}-db` }), () =>
      openDatabase(config, logger, {
        service: options.service,
        entities: options.entities,
        migrations: options.migrations,
        onQuery: options.onQuery,
      }),
    );
    orm = database;
    const serviceRuntime = await options.runtime(database);
    runtime = serviceRuntime;
    logConnectionBudget(config, logger, `${options.service}-subgraph`, serviceRuntime.connections);
    const { guarded, mutationRules } = await buildFederatedSchema(options.definition);
    const fork = (): EntityManager => database.em.fork();
    const idempotency = { fork, rules: mutationRules };
    // What each context was made on, for a mutation with an Idempotency-Key over HTTP (in process, `localSubgraph` holds it).
    const contextOf = async (request: SubgraphRequest, em: EntityManager = fork()) =>
      markMadeOn(await options.context(serviceRuntime, em, request), { em, request });
    await port.serve({
      schema: guarded,
      context: contextOf,
      idempotency,
      isReady: () => answersWithin(() => databaseAnswers(database)),
      routes: options.routes?.(serviceRuntime, database),
    });
    const local = localSubgraph(guarded, contextOf, {
      faults: port.faults,
      log: logger.child({ component: `${options.service}-subgraph` }),
      part: `${options.service}-subgraph`,
      idempotency,
    });
    return {
      name: `${options.service}-subgraph`,
      url: port.url,
      orm: database,
      runtime: serviceRuntime,
      local,
      close: closeAll,
    };
  } catch (error) {
    await closeAll();
    throw error;
  }
}
