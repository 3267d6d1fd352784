import type { FetchNode } from '@apollo/query-planner';
import type { FormattedExecutionResult } from 'graphql';
import { createClient } from 'graphql-sse';
import { CLIENT_ADDRESS_HEADER, clientBucket } from '#lib/http/client-address.js';
import { SUBGRAPH_TOKEN_HEADER } from '#lib/http/subgraph-token.js';
import { REQUEST_ID_HEADER } from '#lib/observability/logger.js';
import { traceHeaders } from '#lib/observability/tracing.js';
import { whenAborted } from '#lib/stoppable.js';
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
 * `signal` aborts when the subscriber leaves: the subgraph's stream, or the SSE connection, ends then.
 */
export function subgraphStreams(options: SubgraphStreamsOptions) {
  return function eventsOf(
    fetch: FetchNode,
    variables: Record<string, unknown>,
    caller: LiveCaller,
    signal: AbortSignal,
  ): AsyncIterable<FormattedExecutionResult> {
    const operation = { query: fetch.operation, variables, operationName: fetch.operationName };
    const local = options.localSubgraphs[fetch.serviceName];
    if (local) return inProcess(local, operation, caller, signal);
    const url = options.subgraphUrls[fetch.serviceName];
    if (!url) throw new Error(`no URL for the subgraph ${fetch.serviceName}`);
    return overSse(url, operation, caller, options.subgraphToken, signal);
  };
}

function inProcess(
  subgraph: LocalSubgraph,
  operation: SubgraphOperation,
  caller: LiveCaller,
  signal: AbortSignal,
): AsyncIterable<FormattedExecutionResult> {
  return subgraph.subscribe(
    operation,
    {
      headers: { ...caller.forwardHeaders, [REQUEST_ID_HEADER]: caller.requestId },
      id: caller.requestId,
      client: caller.clientAddress ? clientBucket(caller.clientAddress) : undefined,
    },
    signal,
  );
}

async function* overSse(
  url: string,
  operation: SubgraphOperation,
  caller: LiveCaller,
  subgraphToken: string | undefined,
  signal: AbortSignal,
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
  const results = client.iterate({
    query: operation.query ?? '',
    variables: operation.variables,
    operationName: operation.operationName,
  }) as AsyncIterableIterator<FormattedExecutionResult>;
  // graphql-sse's own return() hangs up at once, and its pending next() then ends.
  const forget = whenAborted(signal, () => void results.return?.());
  try {
    yield* results;
  } finally {
    forget();
    client.dispose();
  }
}
