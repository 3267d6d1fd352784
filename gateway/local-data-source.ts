import { randomUUID } from 'node:crypto';
import type { GraphQLDataSource, GraphQLDataSourceProcessOptions } from '@apollo/gateway';
import { clientBucket } from '#lib/http/client-address.js';
import { REQUEST_ID_HEADER } from '#lib/observability/logger.js';
import type { GatewayContext } from '#lib/rest/graphql-client.js';
import type { LocalSubgraph } from '#lib/subgraph/local-subgraph.js';
import { takeAnswerExtensions, type SubgraphResponse } from './subgraph-answers.js';

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
