import { executeQueryPlan, type GraphQLDataSource, type ServiceMap } from '@apollo/gateway';
import type { FetchNode, QueryPlan } from '@apollo/query-planner';
import type { GatewayGraphQLRequestContext } from '@apollo/server-gateway-interface';
import type { FormattedExecutionResult, GraphQLError, GraphQLFormattedError } from 'graphql';
import type { Logger } from '#lib/observability/logger.js';
import type { GatewayContext } from '#lib/rest/graphql-client.js';
import type { Admitted } from './admission.js';
import { CURSOR_ALIAS, type LivePlan, type LivePlanner } from './live-plan.js';
import type { LiveCaller } from './subgraph-streams.js';

/** One delivery: the client's result, and the event's cursor when its type has one (SSE's `id:`). */
export interface LiveEvent {
  result: FormattedExecutionResult;
  cursor?: string;
}

/** The name the replayed event goes by in a per-event plan: no subgraph can be called so. */
const EVENT_SOURCE = '(live event)';

export interface LiveExecutorOptions {
  planner: LivePlanner;
  /** The gateway's data sources by subgraph name: the per-event fetches run through them as any query's do. */
  serviceMap: ServiceMap;
  eventsOf(
    fetch: FetchNode,
    variables: Record<string, unknown>,
    caller: LiveCaller,
    signal: AbortSignal,
  ): AsyncIterable<FormattedExecutionResult>;
  /** The gateway's error formatting (masking in production), applied to every result. */
  formatError: (error: GraphQLError | GraphQLFormattedError) => GraphQLFormattedError;
  log: Logger;
}

/**
 * Runs one admitted subscription: subscribes to the subgraph that owns its root field and, for each
 * event, fills in what other subgraphs own with the rest of the subscription's query plan, under the
 * caller's credentials at that moment (the event's entities are fetched then, not when subscribing).
 * An event the owner answers alone is passed on as it came. `signal` aborts when the subscriber
 * leaves: it goes to the owner's stream, whose end unwinds this generator without another event.
 */
export function liveExecutor(options: LiveExecutorOptions) {
  const { planner, log } = options;
  return async function* subscribe(
    admitted: Admitted,
    caller: LiveCaller,
    signal: AbortSignal,
  ): AsyncGenerator<LiveEvent> {
    const plan = planner.plan(admitted.document, admitted.operationName);
    const variables = variablesFor(plan.primary, admitted.variables);
    for await (const event of options.eventsOf(plan.primary, variables, caller, signal)) {
      const cursor = takeCursor(event, plan.responseKey);
      if (!plan.rest) {
        yield { result: formatted(event, options.formatError), cursor };
        continue;
      }
      const completed = await completeEvent(plan, event, admitted, caller, options).catch((error: unknown) => {
        log.error({ err: error, requestId: caller.requestId }, 'an event could not be completed');
        throw error;
      });
      yield { result: completed, cursor };
    }
  };
}

/** Runs the rest of the plan over one event: the event stands for the primary fetch's answer. */
async function completeEvent(
  plan: LivePlan,
  event: FormattedExecutionResult,
  admitted: Admitted,
  caller: LiveCaller,
  options: LiveExecutorOptions,
): Promise<FormattedExecutionResult> {
  const replay: GraphQLDataSource = { process: () => Promise.resolve(event as never) };
  const queryPlan: QueryPlan = {
    kind: 'QueryPlan',
    node: {
      kind: 'Sequence',
      nodes: [{ ...plan.primary, serviceName: EVENT_SOURCE }, ...(plan.rest ? [plan.rest] : [])],
    },
  };
  const context: GatewayContext = {
    forwardHeaders: caller.forwardHeaders,
    requestId: caller.requestId,
    clientAddress: caller.clientAddress,
  };
  // executeQueryPlan reads the variables, the context and the logger of a request context, and its
  // metrics for tracing; the rest of Apollo's request context does not exist outside Apollo Server.
  const requestContext = {
    request: { query: admitted.text, variables: admitted.variables, operationName: admitted.operationName },
    context,
    logger: options.log,
    metrics: {},
  } as unknown as GatewayGraphQLRequestContext;
  const result = await executeQueryPlan(
    queryPlan,
    { ...options.serviceMap, [EVENT_SOURCE]: replay },
    requestContext,
    plan.operationContext,
    options.planner.supergraphGraphQLSchema,
    options.planner.apiSchema,
  );
  return {
    data: result.data ?? null,
    ...(result.errors?.length ? { errors: result.errors.map((error) => options.formatError(error)) } : {}),
  };
}

/** The variables the primary fetch uses, as Apollo's executor picks them for any fetch. */
function variablesFor(fetch: FetchNode, variables: Record<string, unknown>): Record<string, unknown> {
  const picked: Record<string, unknown> = {};
  for (const name of fetch.variableUsages ?? []) if (variables[name] !== undefined) picked[name] = variables[name];
  return picked;
}

/** Takes the cursor the gateway asked for (`CURSOR_ALIAS`) out of an event, so that the client sees only its selection. */
function takeCursor(event: FormattedExecutionResult, responseKey: string): string | undefined {
  const payload = event.data?.[responseKey] as Record<string, unknown> | null | undefined;
  if (!payload || typeof payload !== 'object' || !(CURSOR_ALIAS in payload)) return undefined;
  const cursor = payload[CURSOR_ALIAS];
  delete payload[CURSOR_ALIAS];
  return typeof cursor === 'string' ? cursor : undefined;
}

/** A subgraph's event passed on: its errors formatted by the gateway's rules, as a query's would be. */
function formatted(
  event: FormattedExecutionResult,
  formatError: LiveExecutorOptions['formatError'],
): FormattedExecutionResult {
  if (!event.errors?.length) return event.data === undefined ? { data: null } : { data: event.data };
  return { data: event.data ?? null, errors: event.errors.map((error) => formatError(error)) };
}
