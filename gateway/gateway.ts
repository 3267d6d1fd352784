import { readFileSync } from 'node:fs';
import path from 'node:path';
import { ApolloGateway, type ServiceMap } from '@apollo/gateway';
import { ApolloServer, type ApolloServerPlugin } from '@apollo/server';
import {
  ApolloServerPluginCacheControlDisabled,
  ApolloServerPluginLandingPageDisabled,
  ApolloServerPluginSchemaReportingDisabled,
  ApolloServerPluginUsageReportingDisabled,
} from '@apollo/server/plugin/disabled';
import { expressMiddleware } from '@as-integrations/express5';
import { settleUrlParseWarning } from '#lib/http/url-parse-warning.js';
import { keepFederationOperations } from './operation-memo.js';
import express from 'express';
import type { GraphQLError, GraphQLFormattedError } from 'graphql';
import { applyTrustProxy, gatewayClientOf } from '#lib/http/client-address.js';
import type { Config } from '#lib/config.js';
import { corsFor } from '#lib/http/cors.js';
import { refuseCrossSiteRequests } from '#lib/http/csrf.js';
import { formatGraphQLError } from '#lib/errors.js';
import {
  forwardHeadersOf,
  inProcessClient,
  type GatewayContext,
  type GraphQLClient,
} from '#lib/rest/graphql-client.js';
import { operationObserver, operationTelemetry } from '#lib/observability/graphql-telemetry.js';
import { addProbes, graphqlRequestErrorHandler, listen, type PartPort } from '#lib/http/http.js';
import { compressAnswers } from '#lib/http/http-answers.js';
import { checkJsonBody, refuseUnstorableGraphQLText } from '#lib/http/input.js';
import type { LocalSubgraph } from '#lib/subgraph/local-subgraph.js';
import { assignRequestId, httpLogger, oneLineLogger, requestIdOf, type Logger } from '#lib/observability/logger.js';
import { httpMetrics } from '#lib/observability/metrics.js';
import { PROJECT_ROOT } from '#lib/paths.js';
import { queryLimits } from '#lib/subgraph/query-limits.js';
import { refuseUntrustedDocuments, safelistOf } from '#lib/http/document-safelist.js';
import { applySessionCookie, SESSION_COOKIE_SUBGRAPH } from '#lib/http/session-cookie.js';
import type { RunningPart } from '#lib/service.js';
import { resumeTrace, traceRequests } from '#lib/observability/tracing.js';
import { graphiqlRouter, sandboxLandingPage } from './explorer.js';
import { refuseUnsupportedOperations } from './unsupported-operations.js';
import { ForwardingDataSource } from './forwarding-data-source.js';
import { LocalDataSource } from './local-data-source.js';
import { QueryPlanCache } from './query-plan-cache.js';
import { answerSubgraphFacts, stateSubgraphFacts } from './subgraph-answers.js';
import { ShortPaths } from './short-path.js';
import { serveShortPaths } from './short-path-http.js';
import { inProcessSubscriptions } from './subscriptions/in-process.js';
import { LiveGraph } from './subscriptions/live-graph.js';
import { serveMultipartSubscriptions } from './subscriptions/multipart.js';
import { serveSseSubscriptions } from './subscriptions/sse.js';
import { serveWebSocketSubscriptions } from './subscriptions/websocket.js';

export const SUPERGRAPH_PATH = path.join(PROJECT_ROOT, 'schema', 'supergraph.graphql');

/**
 * Headers of Apollo's CSRF prevention. It is replaced here by `refuseCrossSiteRequests`, but clients
 * configured for it still send them, so a preflight allows them.
 */
const APOLLO_PREFLIGHT_HEADERS = ['Apollo-Require-Preflight', 'X-Apollo-Operation-Name'];

export interface GatewayOptions {
  /** A port to open, or one opened already while the subgraphs waited for their databases. */
  port: PartPort;
  /** Subgraph URLs by subgraph name; they override the URLs written in the supergraph. */
  subgraphUrls: Record<string, string>;
  /** Subgraphs running in this process, by name: executed directly, whatever their URL. */
  localSubgraphs?: Record<string, LocalSubgraph>;
  supergraphSdl?: string;
  /**
   * The REST adapters' operation texts: with `TRUSTED_DOCUMENTS` set, the safelist lets them through
   * besides the manifest's documents. Handed in by whoever starts the gateway (scripts/platform.ts,
   * scripts/part.ts), so that the gateway does not import its own clients.
   */
  restOperations?: readonly string[];
}

export interface RunningGateway extends RunningPart {
  /** Runs operations in this process (the REST adapters under `npm start`). */
  client: GraphQLClient;
  /** Hits and misses of the query-plan cache. */
  queryPlans: QueryPlanCache['stats'];
  /** Fixed operations given a short path, and requests it answered; undefined when `GATEWAY_SHORT_PATH=false`. */
  shortPaths?: ShortPaths['stats'];
}

export async function startGateway(
  deps: { config: Config; logger: Logger },
  options: GatewayOptions,
): Promise<RunningGateway> {
  const { config, logger } = deps;
  settleUrlParseWarning();
  keepFederationOperations();
  const log = logger.child({ component: 'gateway' });
  const queryPlans = new QueryPlanCache();
  const armor = queryLimits(config);
  const { trustedDocuments } = config;
  const restOperations = options.restOperations ?? [];
  log.info(
    trustedDocuments
      ? `safelist on (TRUSTED_DOCUMENTS): ${trustedDocuments.size} documents, plus the REST adapters' ${restOperations.length} operations`
      : 'safelist off: any document runs (set TRUSTED_DOCUMENTS to run only the documents of a manifest)',
  );

  const formatError = (formatted: GraphQLFormattedError, error: unknown) =>
    formatGraphQLError(formatted, error, (internal) => log.error({ err: internal }, 'unexpected error in gateway'));
  // One observer for both paths: the same operation line and metrics, and one cap on operation names.
  const observeOperation = operationObserver<GatewayContext>({ part: 'gateway', log, requestIdOf: (c) => c.requestId });
  // How a fixed operation runs is the gateway's to decide (DESIGN.md): see short-path.ts.
  const shortPaths =
    config.env.GATEWAY_SHORT_PATH === 'true'
      ? new ShortPaths({
          fixedTexts: new Set([...restOperations, ...(trustedDocuments?.values() ?? [])]),
          formatError,
          observe: observeOperation,
          didEncounterErrors: errorHooksOf(armor.plugins as unknown as ApolloServerPlugin<GatewayContext>[]),
          stateFacts: stateSubgraphFacts,
        })
      : undefined;
  const supergraphSdl = options.supergraphSdl ?? readFileSync(SUPERGRAPH_PATH, 'utf8');
  // The data sources Apollo Gateway builds, kept by name: the live graph's per-event fetches use them too.
  const serviceMap: ServiceMap = {};
  const gateway = new ApolloGateway({
    queryPlannerConfig: { cache: queryPlans as never },
    experimental_didResolveQueryPlan: shortPaths?.learn,
    supergraphSdl,
    // Node's own fetch (undici) keeps connections to the subgraphs alive; the default fetcher adds an
    // HTTP cache layer that a GraphQL POST never uses.
    buildService: ({ name, url }) => {
      const service = buildService(name, url);
      serviceMap[name] = service;
      return service;
    },
    logger: oneLineLogger(log),
  });
  function buildService(name: string, url: string | undefined) {
    const local = options.localSubgraphs?.[name];
    const mayAskForSessionCookie = name === SESSION_COOKIE_SUBGRAPH;
    if (local) return new LocalDataSource(local, mayAskForSessionCookie);
    return Object.assign(
      new ForwardingDataSource({ url: options.subgraphUrls[name] ?? url, fetcher: globalThis.fetch }),
      {
        subgraphToken: config.env.SUBGRAPH_TOKEN[0],
        mayAskForSessionCookie,
        log,
      },
    );
  }
  const apollo = new ApolloServer<GatewayContext>({
    gateway,
    // The platform stops its parts itself, in order, on SIGINT/SIGTERM (scripts/start.ts). Apollo's own
    // signal handlers would stop this server behind that back, and the platform's close then hangs.
    stopOnTerminationSignals: false,
    introspection: !config.isProduction,
    includeStacktraceInErrorResponses: false,
    allowBatchedHttpRequests: false,
    // `refuseCrossSiteRequests` below stops forgeries by Fetch Metadata and lets urql's GET queries run.
    csrfPrevention: false,
    parseOptions: armor.parseOptions,
    validationRules: armor.validationRules,
    formatError,
    // graphql-armor is typed against Apollo's CommonJS build; the plugins are the same objects.
    // Nothing reads cache hints, usage reports or schema reports here: their per-request work stays off
    // (usage and schema reporting would switch on by themselves with APOLLO_KEY in the environment).
    plugins: [
      ApolloServerPluginCacheControlDisabled(),
      ApolloServerPluginUsageReportingDisabled(),
      ApolloServerPluginSchemaReportingDisabled(),
      ...(armor.plugins as unknown as ApolloServerPlugin<GatewayContext>[]),
      config.isProduction ? ApolloServerPluginLandingPageDisabled() : sandboxLandingPage<GatewayContext>(),
      // In process (under npm start) the gateway has no HTTP log line: this one names each operation.
      operationTelemetry<GatewayContext>(observeOperation),
      answerSubgraphFacts(),
    ],
  });
  await apollo.start();
  const live = new LiveGraph({
    config,
    log: log.child({ component: 'live-graph' }),
    apollo,
    supergraphSdl,
    serviceMap,
    localSubgraphs: options.localSubgraphs ?? {},
    subgraphUrls: options.subgraphUrls,
    parseOptions: armor.parseOptions,
    validationRules: armor.validationRules,
    safelist: trustedDocuments ? safelistOf(trustedDocuments, restOperations) : undefined,
  });

  /** The caller of one HTTP request, as both paths take it. */
  const contextOf = (req: express.Request, res: express.Response): GatewayContext => ({
    forwardHeaders: forwardHeadersOf(req.headers),
    requestId: requestIdOf(req),
    clientAddress: gatewayClientOf(req, config.env.SUBGRAPH_TOKEN),
    setSessionCookie: (change) => applySessionCookie(res, change, config.surveysCookieSecure),
  });

  let shuttingDown = false;
  const app = express();
  applyTrustProxy(app, config.env.TRUST_PROXY);
  app.disable('x-powered-by');
  // No ETag: GraphQL answers go to POSTs that no cache revalidates, and Express would hash every body.
  app.disable('etag');
  app.use(
    assignRequestId,
    httpMetrics('gateway', ['/graphql']),
    traceRequests('gateway', ['/graphql']),
    compressAnswers(),
  );
  addProbes(app, () => !shuttingDown);
  const graphiql = config.isProduction ? undefined : graphiqlRouter(log);
  if (graphiql) app.use(graphiql);
  app.use(
    '/graphql',
    corsFor(config, ['GET', 'POST'], APOLLO_PREFLIGHT_HEADERS),
    httpLogger(logger, 'gateway'),
    refuseCrossSiteRequests(config),
    express.json({ limit: config.env.BODY_LIMIT_BYTES, verify: checkJsonBody }),
    refuseUnstorableGraphQLText,
    // Only here: the subgraph ports take calls from this gateway alone (SUBGRAPH_TOKEN beyond loopback),
    // which plans each fetch itself from a document it checked, so those texts are never a client's own.
    ...(trustedDocuments ? [refuseUntrustedDocuments(trustedDocuments, restOperations)] : []),
    // Subscriptions, asked for as a stream, leave here for the live graph; what is left goes to Apollo.
    serveMultipartSubscriptions(live, config.env.SUBGRAPH_TOKEN),
    serveSseSubscriptions(live, config.env.SUBGRAPH_TOKEN),
    refuseUnsupportedOperations(armor.parseOptions),
    resumeTrace,
    ...(shortPaths ? [serveShortPaths(shortPaths, contextOf)] : []),
    expressMiddleware(apollo, { context: async ({ req, res }) => contextOf(req, res) }),
  );
  app.use(graphqlRequestErrorHandler(log));

  const server = await listen(app, options.port, config.env.HOST, '/graphql');
  const webSockets = serveWebSocketSubscriptions(server.server, live, config);
  return {
    name: 'gateway',
    url: server.url,
    client: inProcessClient(apollo, inProcessSubscriptions(live), shortPaths),
    queryPlans: queryPlans.stats,
    shortPaths: shortPaths?.stats,
    close: async () => {
      shuttingDown = true;
      // Every stream ends first (WebSocket 1012, multipart and SSE closed), so that the drain below
      // waits for no subscription and clients reconnect with their last cursor.
      live.streams.endAll();
      await Promise.all([webSockets.close(), server.close()]);
      await apollo.stop();
    },
  };
}

/** The plugins' `didEncounterErrors` hooks, run for errors the short path answers as Apollo Server runs them. */
function errorHooksOf(plugins: readonly ApolloServerPlugin<GatewayContext>[]) {
  return async (errors: readonly GraphQLError[]): Promise<void> => {
    for (const plugin of plugins) {
      const listener = await plugin.requestDidStart?.({} as never);
      await listener?.didEncounterErrors?.({ errors } as never);
    }
  };
}
