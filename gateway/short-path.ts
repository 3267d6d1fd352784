import { createRequire } from 'node:module';
import type { Experimental_DidResolveQueryPlanCallback, GraphQLDataSourceProcessOptions } from '@apollo/gateway';
import type { FetchNode, PlanNode, SubscriptionNode } from '@apollo/query-planner';
import { SpanStatusCode } from '@opentelemetry/api';
import {
  getVariableValues,
  GraphQLError,
  Kind,
  OperationTypeNode,
  type GraphQLErrorOptions,
  type GraphQLFormattedError,
  type GraphQLObjectType,
  type VariableDefinitionNode,
} from 'graphql';
import type { ObservedOperation } from '#lib/observability/graphql-telemetry.js';
import type { GatewayContext, GraphQLResult } from '#lib/rest/graphql-client.js';
import { inGatewaySpan, requestSpanAttributes, type OperationContext } from './gateway-spans.js';
import { LocalDataSource } from './local-data-source.js';
import { compileShape, NotShapeable, shape, type Shaped } from './result-shape.js';

/**
 * The short path of a fixed operation (a REST adapter's text, or a document of `TRUSTED_DOCUMENTS`).
 *
 * The first time the gateway plans one, Apollo Gateway tells us its plan. When that plan is one fetch
 * from a subgraph in this process, the operation is kept here with that fetch, and from then on runs
 * straight on that subgraph: no Apollo Server request pipeline (parsing and validating again, the
 * query's hash, plugin hooks), no query-plan execution, and a result shaping compiled for the
 * operation instead of Apollo Gateway's walk of it. Everything the full path does around it is done
 * the same way here, with the same functions where they are ours: the gateway's operation line and
 * metrics, Apollo Gateway's spans, the subgraph's data source (credentials, request id, the session
 * cookie, rate limits and replay marks), the errors as the gateway names and paths them
 * (`serviceName`), masked and formatted by the gateway's `formatError`. Its limits (depth, cost,
 * aliases) were checked when the full path first validated the text; only a text that passed them is
 * ever planned. Variables that do not fit the operation, and anything the short path does not know
 * how to answer exactly, keep the full path. test/gateway/short-path.test.ts runs every fixed
 * operation both ways and compares the answers byte for byte.
 */

const require = createRequire(import.meta.url);
const federation = require('@apollo/federation-internals') as {
  errorCodeDef(error: GraphQLFormattedError): ErrorCodeDefinition | undefined;
  ERRORS: { DOWNSTREAM_SERVICE_ERROR: ErrorCodeDefinition };
};

interface ErrorCodeDefinition {
  err(message: string, options: GraphQLErrorOptions): GraphQLError;
}

/** What the short path needs from the gateway around it: the same pieces its Apollo Server runs. */
export interface ShortPathDeps {
  /** The texts that may take it: the REST adapters' operations and the trusted documents. */
  fixedTexts: ReadonlySet<string>;
  /** The gateway's `formatError` (masking in production, the internal error's log line). */
  formatError: (formatted: GraphQLFormattedError, error: unknown) => GraphQLFormattedError;
  /** The gateway's operation observer: the `graphql operation` line, its metrics. */
  observe: (context: GatewayContext) => ObservedOperation;
  /** The Apollo plugins' `didEncounterErrors` (graphql-armor hides field suggestions in production). */
  didEncounterErrors: (errors: readonly GraphQLError[]) => Promise<void>;
  /** States the subgraphs' facts (rate limits, replay) in the answer, as `answerSubgraphFacts` does. */
  stateFacts: (context: GatewayContext, result: GraphQLResult<unknown>) => void;
}

interface ShortPath {
  fetch: FetchNode;
  dataSource: LocalDataSource;
  operationContext: OperationContext;
  operationName: string | undefined;
  variableDefinitions: readonly VariableDefinitionNode[];
  shape: ReturnType<typeof compileShape>;
}

/** The single fetch of a plan: a Fetch at the root, or the one node of a Sequence or Parallel. */
function singleFetchOf(node: PlanNode | SubscriptionNode | undefined): FetchNode | undefined {
  if (!node) return undefined;
  if (node.kind === 'Fetch') return node;
  if ((node.kind === 'Sequence' || node.kind === 'Parallel') && node.nodes.length === 1)
    return singleFetchOf(node.nodes[0]);
  return undefined;
}

export class ShortPaths {
  /** Operations learned (kept with their fetch) and requests answered by the short path. */
  readonly stats = { learned: 0, taken: 0 };
  /** Per fixed text: its short path, or null when its plan does not allow one. */
  private readonly paths = new Map<string, ShortPath | null>();

  constructor(private readonly deps: ShortPathDeps) {}

  /** Apollo Gateway's `experimental_didResolveQueryPlan`: called on every full-path request, after planning. */
  readonly learn: Experimental_DidResolveQueryPlanCallback = ({
    queryPlan,
    serviceMap,
    operationContext,
    requestContext,
  }) => {
    const query = requestContext.request.query;
    if (query === undefined || this.paths.has(query) || !this.deps.fixedTexts.has(query)) return;
    const dataSource = serviceMap[singleFetchOf(queryPlan.node)?.serviceName ?? ''];
    const path = holdsOneOperation(requestContext.document.definitions)
      ? this.shortPathOf(queryPlan.node, dataSource, operationContext)
      : null;
    this.paths.set(query, path);
    if (path) this.stats.learned++;
  };

  private shortPathOf(
    node: PlanNode | SubscriptionNode | undefined,
    dataSource: unknown,
    operationContext: OperationContext,
  ): ShortPath | null {
    const fetch = singleFetchOf(node);
    const { operation, schema, fragments } = operationContext;
    if (!fetch || !(dataSource instanceof LocalDataSource) || operation.operation === OperationTypeNode.SUBSCRIPTION)
      return null;
    const rewrites = [fetch.inputRewrites, fetch.outputRewrites, fetch.contextRewrites];
    if (fetch.requires || fetch.hasDefers || rewrites.some((list) => list?.length)) return null;
    const rootType = schema.getRootType(operation.operation) as GraphQLObjectType | null | undefined;
    if (!rootType) return null;
    try {
      return {
        fetch,
        dataSource,
        operationContext,
        operationName: operation.name?.value,
        variableDefinitions: operation.variableDefinitions ?? [],
        shape: compileShape(rootType, operation, fragments),
      };
    } catch (error) {
      if (error instanceof NotShapeable) return null;
      throw error;
    }
  }

  /**
   * Runs `query` on its short path, or answers undefined: the text has none (yet), or the variables
   * do not fit the operation (the full path answers that refusal as Apollo Gateway words it).
   */
  run(
    query: string,
    variables: Record<string, unknown> | undefined,
    context: GatewayContext,
    operationName?: string,
  ): Promise<GraphQLResult<unknown>> | undefined {
    const path = this.paths.get(query);
    if (!path || (operationName !== undefined && operationName !== path.operationName)) return undefined;
    if (path.variableDefinitions.length) {
      const { schema } = path.operationContext;
      if (getVariableValues(schema, path.variableDefinitions, variables ?? {}).errors) return undefined;
    }
    this.stats.taken++;
    // Apollo Server runs an operation on a copy of the caller's context (`executeOperation`).
    return this.answer(path, variables, { ...context });
  }

  private async answer(
    path: ShortPath,
    variables: Record<string, unknown> | undefined,
    context: GatewayContext,
  ): Promise<GraphQLResult<unknown>> {
    const observed = this.deps.observe(context);
    observed.resolved(path.operationContext.operation.operation, path.operationName);
    const result = await inGatewaySpan(
      'gateway.request',
      requestSpanAttributes(path.operationContext),
      async (span) => {
        inGatewaySpan('gateway.validate', {}, () => undefined);
        const executed = await inGatewaySpan('gateway.execute', {}, () => this.execute(path, variables, context));
        if (executed.errors) span?.setStatus({ code: SpanStatusCode.ERROR });
        return executed;
      },
    );
    const errors = result.errors ? await this.formatErrors(result.errors) : undefined;
    const answer: GraphQLResult<unknown> = { ...result, errors };
    this.deps.stateFacts(context, answer);
    observed.finish(errors, path.operationName);
    return answer;
  }

  /** `executeQueryPlan` for one fetch: the fetch, the errors as the gateway names them, the shaping. */
  private async execute(
    path: ShortPath,
    variables: Record<string, unknown> | undefined,
    context: GatewayContext,
  ): Promise<{ data?: unknown; errors?: unknown[]; extensions?: Record<string, unknown> }> {
    const { fetch } = path;
    const errors: unknown[] = [];
    let data: unknown;
    await inGatewaySpan('gateway.fetch', { service: fetch.serviceName }, async (span) => {
      try {
        const response = await path.dataSource.process({
          request: {
            query: fetch.operation,
            variables: fetchVariables(fetch, variables),
            operationName: fetch.operationName,
          },
          context,
        } as GraphQLDataSourceProcessOptions<GatewayContext>);
        errors.push(...(response.errors ?? []).map((error) => downstreamServiceError(error, fetch.serviceName)));
        data = response.data;
      } catch (error) {
        span?.setStatus({ code: SpanStatusCode.ERROR });
        errors.push(error);
      }
    });
    return inGatewaySpan('gateway.postprocessing', {}, () => {
      let shaped: Shaped;
      try {
        shaped = shape(path.shape, data);
      } catch (error) {
        return { errors: [new GraphQLError((error as Error).message, { originalError: error as Error })] };
      }
      if (errors.length === 0 && shaped.errors.length > 0)
        return { extensions: { valueCompletion: shaped.errors }, data: shaped.data };
      return errors.length === 0 ? { data: shaped.data } : { errors, data: shaped.data };
    });
  }

  /** Apollo Server's error formatting (`normalizeAndFormatErrors`), with the gateway's `formatError`. */
  private async formatErrors(errors: unknown[]): Promise<GraphQLFormattedError[]> {
    const graphQLErrors = errors.map(ensureGraphQLError);
    await this.deps.didEncounterErrors(graphQLErrors);
    return errors.map((error, index) => {
      try {
        return this.deps.formatError(enrichError(graphQLErrors[index]), error);
      } catch {
        return { message: 'Internal server error', extensions: { code: 'INTERNAL_SERVER_ERROR' } };
      }
    });
  }
}

/** The variables Apollo Gateway sends a fetch: those it uses that the request gives a value. */
function fetchVariables(fetch: FetchNode, variables: Record<string, unknown> | undefined): Record<string, unknown> {
  const sent: Record<string, unknown> = Object.create(null) as Record<string, unknown>;
  for (const name of fetch.variableUsages ?? []) {
    if (variables && Object.hasOwn(variables, name) && variables[name] !== undefined) sent[name] = variables[name];
  }
  return sent;
}

/** A subgraph's error as Apollo Gateway states it (`downstreamServiceError`): named for its subgraph. */
function downstreamServiceError(original: GraphQLFormattedError, serviceName: string): GraphQLError {
  const message = original.message || `Error while fetching subquery from service "${serviceName}"`;
  const options = {
    originalError: original as unknown as Error,
    path: original.path ? [...original.path] : undefined,
    extensions: { ...original.extensions, serviceName },
  };
  const codeDefinition = federation.errorCodeDef(original);
  if (!codeDefinition && original.extensions?.code) return new GraphQLError(message, options);
  return (codeDefinition ?? federation.ERRORS.DOWNSTREAM_SERVICE_ERROR).err(message, options);
}

function ensureGraphQLError(error: unknown): GraphQLError {
  if (error instanceof GraphQLError) return error;
  const cause = error instanceof Error ? error : new GraphQLError(`Unexpected error value: ${String(error)}`);
  return cause instanceof GraphQLError ? cause : new GraphQLError(cause.message, { originalError: cause });
}

/** Apollo Server's `enrichError`: a code always (INTERNAL_SERVER_ERROR by default), no stack trace. */
function enrichError(error: GraphQLError): GraphQLFormattedError {
  const extensions: Record<string, unknown> = {
    ...error.extensions,
    code: error.extensions.code ?? 'INTERNAL_SERVER_ERROR',
  };
  const http = extensions.http as { status?: unknown; headers?: unknown } | undefined;
  const isHttpHead =
    !!http &&
    typeof http === 'object' &&
    (!('status' in http) || typeof http.status === 'number') &&
    (!('headers' in http) || http.headers instanceof Map);
  if (isHttpHead) delete extensions.http;
  return { ...error.toJSON(), extensions };
}

/** Whether a document holds exactly one operation (a text with several names one by `operationName`: full path). */
function holdsOneOperation(definitions: readonly { kind: Kind }[]): boolean {
  return definitions.filter((definition) => definition.kind === Kind.OPERATION_DEFINITION).length === 1;
}
