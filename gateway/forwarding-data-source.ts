import { RemoteGraphQLDataSource, type GraphQLDataSourceProcessOptions } from '@apollo/gateway';
import { getOperationAST, GraphQLError, Kind, parse, type GraphQLFormattedError, type SelectionNode } from 'graphql';
import { ErrorCode } from '#lib/errors.js';
import { CLIENT_ADDRESS_HEADER } from '#lib/http/client-address.js';
import { SUBGRAPH_TOKEN_HEADER } from '#lib/http/subgraph-token.js';
import { REQUEST_ID_HEADER, type Logger } from '#lib/observability/logger.js';
import { traceHeaders } from '#lib/observability/tracing.js';
import type { GatewayContext } from '#lib/rest/graphql-client.js';
import { takeAnswerExtensions, type SubgraphResponse } from './subgraph-answers.js';

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
