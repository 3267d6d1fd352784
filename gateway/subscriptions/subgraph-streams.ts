import type { FetchNode } from '@apollo/query-planner';
import type { FormattedExecutionResult } from 'graphql';
import { createClient } from 'graphql-sse';
import { CLIENT_ADDRESS_HEADER, clientBucket } from '#lib/http/client-address.js';
import { SUBGRAPH_TOKEN_HEADER } from '#lib/http/subgraph-token.js';
import { REQUEST_ID_HEADER } from '#lib/observability/logger.js';
import { traceHeaders } from '#lib/observability/tracing.js';
import type { LocalSubgraph, SubgraphOperation } from '#lib/subgraph/local-subgraph.js';

/** Who subscribes: the caller's credentials as forwarded to every subgraph, and the request's id. */
export interface LiveCaller {
  forwardHeaders: Record<string, string>;
  requestId: string;
  clientAddress?: string;
}

export interface SubgraphStreamsOptions {
  localSubgraphs: Record<string, LocalSubgraph>;
  /** Subgraph URLs by name, for the subgraphs deployed apart. */
  subgraphUrls: Record<string, string>;
  /** `SUBGRAPH_TOKEN`: the gateway's proof to a subgraph deployed apart that the call is its own. */
  subgraphToken?: string;
}

/**
 * The events of one subscription fetch, from the subgraph that owns its root field: in process through
 * the subgraph's own `subscribe`, or over GraphQL over SSE (graphql-sse's client, one connection per
 * subscription) from a subgraph deployed apart, with the caller's credentials as every fetch carries them.
 */
export function subgraphStreams(options: SubgraphStreamsOptions) {
  return function eventsOf(
    fetch: FetchNode,
    variables: Record<string, unknown>,
    caller: LiveCaller,
  ): AsyncIterable<FormattedExecutionResult> {
    const operation = { query: fetch.operation, variables, operationName: fetch.operationName };
    const local = options.localSubgraphs[fetch.serviceName];
    if (local) return inProcess(local, operation, caller);
    const url = options.subgraphUrls[fetch.serviceName];
    if (!url) throw new Error(`no URL for the subgraph ${fetch.serviceName}`);
    return overSse(url, operation, caller, options.subgraphToken);
  };
}

function inProcess(
  subgraph: LocalSubgraph,
  operation: SubgraphOperation,
  caller: LiveCaller,
): AsyncIterable<FormattedExecutionResult> {
  return subgraph.subscribe(operation, {
    headers: { ...caller.forwardHeaders, [REQUEST_ID_HEADER]: caller.requestId },
    id: caller.requestId,
    client: caller.clientAddress ? clientBucket(caller.clientAddress) : undefined,
  });
}

async function* overSse(
  url: string,
  operation: SubgraphOperation,
  caller: LiveCaller,
  subgraphToken: string | undefined,
): AsyncGenerator<FormattedExecutionResult> {
  const client = createClient({
    url,
    // The gateway resumes nothing by itself: a lost connection ends the client's stream, which
    // reconnects with its last cursor, so no event is delivered twice.
    retryAttempts: 0,
    headers: () => ({
      ...caller.forwardHeaders,
      [REQUEST_ID_HEADER]: caller.requestId,
      ...(subgraphToken ? { [SUBGRAPH_TOKEN_HEADER]: subgraphToken } : {}),
      ...(subgraphToken && caller.clientAddress ? { [CLIENT_ADDRESS_HEADER]: caller.clientAddress } : {}),
      ...traceHeaders(),
    }),
  });
  try {
    yield* client.iterate({
      query: operation.query ?? '',
      variables: operation.variables,
      operationName: operation.operationName,
    }) as AsyncIterable<FormattedExecutionResult>;
  } finally {
    client.dispose();
  }
}
