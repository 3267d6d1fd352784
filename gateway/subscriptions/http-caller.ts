import type { Request } from 'express';
import { gatewayClientOf } from '#lib/http/client-address.js';
import { requestIdOf } from '#lib/observability/logger.js';
import { forwardHeadersOf } from '#lib/rest/graphql-client.js';
import type { LiveCaller } from './subgraph-streams.js';

/** The subscriber of an HTTP stream (multipart, SSE): its credentials as any GraphQL request forwards them. */
export function httpCallerOf(req: Request, subgraphTokens: readonly string[]): LiveCaller {
  return {
    forwardHeaders: forwardHeadersOf(req.headers),
    requestId: requestIdOf(req),
    clientAddress: gatewayClientOf(req, subgraphTokens),
  };
}

/** The GraphQL parameters of an HTTP request: a POST's JSON body, or a GET's query string. */
export function httpParamsOf(req: Request): Record<string, unknown> {
  if (req.method === 'GET') return req.query;
  return (req.body ?? {}) as Record<string, unknown>;
}
