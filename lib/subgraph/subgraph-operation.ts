import type { IncomingHttpHeaders } from 'node:http';
import type { GraphQLError, GraphQLFormattedError } from 'graphql';

/** What a subgraph's context is made from: the caller's headers (credentials, request id) and the request's id. */
export interface SubgraphRequest {
  headers: IncomingHttpHeaders;
  id?: unknown;
  /**
   * The client that the limits count per (its address; IPv6 per /64): over HTTP the address the
   * gateway forwarded, when the caller is the gateway (`subgraphClientOf`); in process, the gateway's caller.
   */
  client?: string;
}

/** One operation as the gateway sends it to a subgraph. */
export interface SubgraphOperation {
  query?: string;
  variables?: Record<string, unknown>;
  operationName?: string;
}

/** A graphql-js error as a client sees it, with the code that says what refused it. */
export function withCode(error: GraphQLError, code: string): GraphQLFormattedError {
  const formatted = error.toJSON();
  return { ...formatted, extensions: { ...formatted.extensions, code } };
}
