import { z } from 'zod';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { randomUUID } from 'node:crypto';
import {
  ApolloGateway,
  RemoteGraphQLDataSource,
  type GraphQLDataSource,
  type GraphQLDataSourceProcessOptions,
} from '@apollo/gateway';
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
import { getOperationAST, GraphQLError, Kind, parse, type GraphQLFormattedError, type SelectionNode } from 'graphql';
import { applyTrustProxy, CLIENT_ADDRESS_HEADER, clientBucket, gatewayClientOf } from '#lib/http/client-address.js';
import type { Config } from '#lib/config.js';
import { corsFor } from '#lib/http/cors.js';
import { refuseCrossSiteRequests } from '#lib/http/csrf.js';
import { ErrorCode, formatGraphQLError } from '#lib/errors.js';
import {
  forwardHeadersOf,
  inProcessClient,
  type GatewayContext,
  type GraphQLClient,
} from '#lib/rest/graphql-client.js';
import { operationTelemetry } from '#lib/observability/graphql-telemetry.js';
import { addProbes, graphqlRequestErrorHandler, listen, type PartPort } from '#lib/http/http.js';
import { compressAnswers } from '#lib/http/http-answers.js';
import { checkJsonBody, refuseUnstorableGraphQLText } from '#lib/http/input.js';
import type { LocalSubgraph } from '#lib/subgraph/local-subgraph.js';
import {
  assignRequestId,
  httpLogger,
  oneLineLogger,
  REQUEST_ID_HEADER,
  requestIdOf,
  type Logger,
} from '#lib/observability/logger.js';
import { httpMetrics } from '#lib/observability/metrics.js';
import { PROJECT_ROOT } from '#lib/paths.js';
import { queryLimits } from '#lib/subgraph/query-limits.js';
import { refuseUntrustedDocuments } from '#lib/http/document-safelist.js';
import { REST_OPERATION_TEXTS } from '#rest-adapters/operation-texts.js';
import { RATE_LIMIT_EXTENSION, rateLimitStatesSchema } from '#lib/http/rate-limit.js';
import { IDEMPOTENT_REPLAY_EXTENSION } from '#lib/data/idempotency.js';
import {
  applySessionCookie,
  SESSION_COOKIE_EXTENSION,
  SESSION_COOKIE_SUBGRAPH,
  sessionCookieChangeSchema,
} from '#lib/http/session-cookie.js';
import { SUBGRAPH_TOKEN_HEADER } from '#lib/http/subgraph-token.js';
import type { RunningPart } from '#lib/service.js';
import { resumeTrace, traceHeaders, traceRequests } from '#lib/observability/tracing.js';
import { graphiqlRouter, sandboxLandingPage } from './explorer.js';
import { refuseUnsupportedOperations } from './unsupported-operations.js';

export const SUPERGRAPH_PATH = path.join(PROJECT_ROOT, 'schema', 'supergraph.graphql');

/**
 * Headers of Apollo's CSRF prevention. It is replaced here by `refuseCrossSiteRequests`, but clients
 * configured for it still send them, so a preflight allows them.
 */
const APOLLO_PREFLIGHT_HEADERS = ['Apollo-Require-Preflight', 'X-Apollo-Operation-Name'];

type SubgraphResponse = Awaited<ReturnType<GraphQLDataSource['process']>>;

/**
 * Takes one extension out of a subgraph's answer (the client never sees it) and hands its value to
 * `use` when it has the shape `schema` says; a value of any other shape is dropped.
 */
function takeExtension<Value>(
  response: SubgraphResponse,
  name: string,
  schema: z.ZodType<Value>,
  use: (value: Value) => void,
): SubgraphResponse {
  if (!response.extensions || !(name in response.extensions)) return response;
  const { [name]: stated, ...extensions } = response.extensions;
  const parsed = schema.safeParse(stated);
  if (parsed.success) use(parsed.data);
  return { ...response, extensions };
}

/** The replay mark's only value; made once (a zod schema per subgraph answer cost about 1 % of a REST read's CPU). */
const replayMark = z.literal(true);

/**
 * What a subgraph's answer states for the gateway rather than the client: the session cookie to set
 * on the caller's HTTP answer (only from the surveys subgraph: no other may set a cookie through the
 * gateway), the limits it counted, and whether it answered a mutation again for its Idempotency-Key,
 * which `answerSubgraphFacts` states in the gateway's answer.
 * Health checks and schema loading run without a caller, and use neither.
 */
function takeAnswerExtensions(
  response: SubgraphResponse,
  context: GraphQLDataSourceProcessOptions<GatewayContext>['context'],
  mayAskForSessionCookie: boolean,
): SubgraphResponse {
  const caller = 'forwardHeaders' in context ? (context as GatewayContext) : undefined;
  const withoutCookie = takeExtension(response, SESSION_COOKIE_EXTENSION, sessionCookieChangeSchema, (change) => {
    if (mayAskForSessionCookie) caller?.setSessionCookie?.(change);
  });
  const withoutLimits = takeExtension(withoutCookie, RATE_LIMIT_EXTENSION, rateLimitStatesSchema, (states) => {
    if (caller) caller.rateLimits = [...(caller.rateLimits ?? []), ...states];
  });
  return takeExtension(withoutLimits, IDEMPOTENT_REPLAY_EXTENSION, replayMark, () => {
    if (caller) caller.idempotentReplay = true;
  });
}

/**
 * States in the gateway's answer the limits its subgraphs counted for the operation (a REST adapter
 * sends them as `RateLimit` headers) and whether the answer is a replay (`Idempotent-Replayed`);
 * a GraphQL client may read them too.
 */
function answerSubgraphFacts(): ApolloServerPlugin<GatewayContext> {
  return {
    async requestDidStart() {
      return {
        async willSendResponse({ contextValue, response }) {
          if (response.body.kind !== 'single') return;
          const result = response.body.singleResult;
          if (contextValue.rateLimits?.length)
            result.extensions = { ...result.extensions, [RATE_LIMIT_EXTENSION]: contextValue.rateLimits };
          // A mutation answered again for its Idempotency-Key (lib/data/idempotency.ts), not run again.
          if (contextValue.idempotentReplay)
            result.extensions = { ...result.extensions, [IDEMPOTENT_REPLAY_EXTENSION]: true };
        },
      };
    },
  };
}

/** Passes the caller's credentials and request id on to every subgraph the plan touches. */
export class ForwardingDataSource extends RemoteGraphQLDataSource<GatewayContext> {
  /** `SUBGRAPH_TOKEN`: the gateway's proof to subgraphs deployed apart that the call is its own. */
  subgraphToken?: string;
  /** Whether this subgraph's answers may set the session cookie (`SESSION_COOKIE_SUBGRAPH`). */
  mayAskForSessionCookie = false;

  /** Where a subgraph that cannot be reached is reported. */
  log?: Logger;

  /**
   * A fetch that fails outright (the subgraph is down, or answers 4xx/5xx) is answered as the
   * subgraph's own errors rather than thrown: Apollo Gateway then names the subgraph
   * (`extensions.serviceName`) and places each error at the fields that fetch would have filled, as
   * it does for errors a subgraph returns; a thrown one would stand with neither.
   */
  override async process(options: GraphQLDataSourceProcessOptions<GatewayContext>): Promise<SubgraphResponse> {
    try {
      return await super.process(options);
    } catch (error) {
      const answer = error instanceof GraphQLError ? error.toJSON() : this.unreachable(error);
      return { errors: errorsAtFetchedFields(answer, options.request) };
    }
  }

  private unreachable(error: unknown): GraphQLFormattedError {
    this.log?.warn({ err: error, subgraph: this.url }, 'subgraph not answering');
    return { message: 'A service is not answering', extensions: { code: ErrorCode.SERVICE_UNAVAILABLE } };
  }

  override willSendRequest({ request, context }: GraphQLDataSourceProcessOptions<GatewayContext>): void {
    const headers = request.http?.headers;
    if (headers && this.subgraphToken) headers.set(SUBGRAPH_TOKEN_HEADER, this.subgraphToken);
    // Health checks and schema loading run without a caller.
    if (!headers || !('forwardHeaders' in context)) return;
    const caller = context as GatewayContext;
    for (const [name, value] of Object.entries(caller.forwardHeaders)) headers.set(name, value);
    headers.set(REQUEST_ID_HEADER, caller.requestId);
    if (caller.clientAddress) headers.set(CLIENT_ADDRESS_HEADER, caller.clientAddress);
    // The active span here is Apollo Gateway's `gateway.fetch`: the subgraph's spans go under it.
    for (const [name, value] of Object.entries(traceHeaders())) headers.set(name, value);
  }

  override didReceiveResponse({
    response,
    context,
  }: Required<Pick<GraphQLDataSourceProcessOptions<GatewayContext>, 'request' | 'context'>> & {
    response: SubgraphResponse;
  }): SubgraphResponse {
    return takeAnswerExtensions(response, context, this.mayAskForSessionCookie);
  }

  /**
   * A subgraph that answers 4xx still explains itself in GraphQL `errors`; pass its message and code
   * on (e.g. BAD_USER_INPUT for a bad scalar value), instead of a bare "400: Bad Request" that the
   * error masking would turn into a 500.
   */
  override async errorFromResponse(
    response: Parameters<RemoteGraphQLDataSource['errorFromResponse']>[0],
  ): Promise<GraphQLError> {
    const body = (await response
      .clone()
      .json()
      .catch(() => undefined)) as { errors?: GraphQLFormattedError[] } | undefined;
    const first = body?.errors?.[0];
    // A subgraph whose database is out says so with a 503 of its own: pass that on too, with its Retry-After.
    if ((response.status < 500 || first?.extensions?.code === ErrorCode.SERVICE_UNAVAILABLE) && first?.message) {
      return new GraphQLError(first.message, {
        extensions: { ...first.extensions, code: first.extensions?.code ?? ErrorCode.BAD_USER_INPUT },
      });
    }
    return super.errorFromResponse(response);
  }
}

/**
 * One copy of a failed fetch's error per field that fetch was to fill, with the path Apollo Gateway
 * resolves in the client's answer: `[field]` for a root field, `['_entities', i, field]` for a field
 * of the i-th entity (the gateway maps it to that entity's place).
 */
export function errorsAtFetchedFields(
  error: GraphQLFormattedError,
  request: GraphQLDataSourceProcessOptions['request'],
): GraphQLFormattedError[] {
  const operation = request.query ? getOperationAST(parse(request.query)) : null;
  if (!operation) return [error];
  const namesOf = (selections: readonly SelectionNode[]): string[] =>
    selections.flatMap((selection) => {
      if (selection.kind === Kind.FIELD)
        return selection.name.value === '__typename' ? [] : [selection.alias?.value ?? selection.name.value];
      if (selection.kind === Kind.INLINE_FRAGMENT) return namesOf(selection.selectionSet.selections);
      return [];
    });
  const roots = operation.selectionSet.selections;
  const entities = roots.find((selection) => selection.kind === Kind.FIELD && selection.name.value === '_entities');
  if (entities?.kind !== Kind.FIELD || !entities.selectionSet) {
    return [...new Set(namesOf(roots))].map((field) => ({ ...error, path: [field] }));
  }
  const fields = [...new Set(namesOf(entities.selectionSet.selections))];
  const representations: unknown = request.variables?.representations;
  const count = Array.isArray(representations) ? representations.length : 0;
  return Array.from({ length: count }, (_, index) =>
    fields.map((field) => ({ ...error, path: ['_entities', index, field] })),
  ).flat();
}

/**
 * A subgraph in this process (`npm start`): the gateway runs its schema directly, with the caller's
 * credentials and request id as the HTTP path would send them, and skips loopback HTTP, a second
 * Express stack and JSON both ways.
 */
export class LocalDataSource implements GraphQLDataSource<GatewayContext> {
  constructor(
    private readonly subgraph: LocalSubgraph,
    /** Whether this subgraph's answers may set the session cookie (`SESSION_COOKIE_SUBGRAPH`). */
    private readonly mayAskForSessionCookie = false,
  ) {}

  async process({ request, context }: GraphQLDataSourceProcessOptions<GatewayContext>): Promise<SubgraphResponse> {
    // Health checks and schema loading run without a caller.
    const caller = 'forwardHeaders' in context ? (context as GatewayContext) : undefined;
    const requestId = caller?.requestId ?? randomUUID();
    const headers = { ...caller?.forwardHeaders, [REQUEST_ID_HEADER]: requestId };
    // In process the caller's address needs no proof: it is handed over as the gateway found it.
    const response = await this.subgraph.execute(request, {
      headers,
      id: requestId,
      client: caller?.clientAddress ? clientBucket(caller.clientAddress) : undefined,
    });
    return takeAnswerExtensions(response, context, this.mayAskForSessionCookie);
  }
}

/** How many query plans a gateway keeps; the REST adapters' operations are a few dozen. */
const QUERY_PLAN_CACHE_SIZE = 500;

/**
 * The gateway's query-plan cache (Apollo's `queryPlannerConfig.cache`), bounded by count, with its
 * hits and misses: a repeated operation must be planned once (a test holds every REST operation to it).
 */
export class QueryPlanCache<Plan = unknown> {
  readonly stats = { hits: 0, misses: 0 };
  private readonly plans = new Map<string, Plan>();

  get(key: string): Promise<Plan | undefined> {
    const plan = this.plans.get(key);
    if (plan === undefined) this.stats.misses++;
    else this.stats.hits++;
    return Promise.resolve(plan);
  }

  set(key: string, plan: Plan): Promise<void> {
    if (this.plans.size >= QUERY_PLAN_CACHE_SIZE) this.plans.delete(this.plans.keys().next().value!);
    this.plans.set(key, plan);
    return Promise.resolve();
  }

  delete(key: string): Promise<boolean> {
    return Promise.resolve(this.plans.delete(key));
  }

  /** Apollo clears the store when the supergraph changes. */
  clear(): void {
    this.plans.clear();
  }
}

export interface GatewayOptions {
  /** A port to open, or one opened already while the subgraphs waited for their databases. */
  port: PartPort;
  /** Subgraph URLs by subgraph name; they override the URLs written in the supergraph. */
  subgraphUrls: Record<string, string>;
  /** Subgraphs running in this process, by name: executed directly, whatever their URL. */
  localSubgraphs?: Record<string, LocalSubgraph>;
  supergraphSdl?: string;
}

export interface RunningGateway extends RunningPart {
  /** Runs operations in this process (the REST adapters under `npm start`). */
  client: GraphQLClient;
  /** Hits and misses of the query-plan cache. */
  queryPlans: QueryPlanCache['stats'];
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
  const gateway = new ApolloGateway({
    queryPlannerConfig: { cache: queryPlans as never },
    supergraphSdl: options.supergraphSdl ?? readFileSync(SUPERGRAPH_PATH, 'utf8'),
    // Node's own fetch (undici) keeps connections to the subgraphs alive; the default fetcher adds an
    // HTTP cache layer that a GraphQL POST never uses.
    buildService: ({ name, url }) => {
      const local = options.localSubgraphs?.[name];
      const mayAskForSessionCookie = name === SESSION_COOKIE_SUBGRAPH;
      if (local) return new LocalDataSource(local, mayAskForSessionCookie);
      return Object.assign(
        new ForwardingDataSource({ url: options.subgraphUrls[name] ?? url, fetcher: globalThis.fetch }),
        {
          subgraphToken: config.env.SUBGRAPH_TOKEN,
          mayAskForSessionCookie,

          log,
        },
      );
    },
    logger: oneLineLogger(log),
  });
  const armor = queryLimits(config);
  const { trustedDocuments } = config;
  log.info(
    trustedDocuments
      ? `safelist on (TRUSTED_DOCUMENTS): ${trustedDocuments.size} documents, plus the REST adapters' ${REST_OPERATION_TEXTS.length} operations`
      : 'safelist off: any document runs (set TRUSTED_DOCUMENTS to run only the documents of a manifest)',
  );

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
    formatError: (formatted, error) =>
      formatGraphQLError(formatted, error, (internal) => log.error({ err: internal }, 'unexpected error in gateway')),
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
      operationTelemetry<GatewayContext>({ part: 'gateway', log, requestIdOf: (context) => context.requestId }),
      answerSubgraphFacts(),
    ],
  });
  await apollo.start();

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
    ...(trustedDocuments ? [refuseUntrustedDocuments(trustedDocuments, REST_OPERATION_TEXTS)] : []),
    refuseUnsupportedOperations(armor.parseOptions),
    resumeTrace,
    expressMiddleware(apollo, {
      context: async ({ req, res }) => ({
        forwardHeaders: forwardHeadersOf(req.headers),
        requestId: requestIdOf(req),
        clientAddress: gatewayClientOf(req, config.env.SUBGRAPH_TOKEN),
        setSessionCookie: (change) => applySessionCookie(res, change, config.surveysCookieSecure),
      }),
    }),
  );
  app.use(graphqlRequestErrorHandler(log));

  const server = await listen(app, options.port, config.env.HOST, '/graphql');
  return {
    name: 'gateway',
    url: server.url,
    client: inProcessClient(apollo),
    queryPlans: queryPlans.stats,
    close: async () => {
      shuttingDown = true;
      await server.close();
      await apollo.stop();
    },
  };
}
