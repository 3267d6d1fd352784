import type { ApolloServer } from '@apollo/server';
import type { GraphQLFormattedError } from 'graphql';
import { createClient, NetworkError } from 'graphql-sse';
import { CLIENT_ADDRESS_HEADER } from '../http/client-address.js';
import { REQUEST_ID_HEADER } from '../observability/logger.js';
import { stoppable, whenAborted } from '../stoppable.js';
import type { RateLimitState } from '../http/rate-limit.js';
import type { SessionCookieChange } from '../http/session-cookie.js';
import { SUBGRAPH_TOKEN_HEADER } from '../http/subgraph-token.js';
import { traceHeaders } from '../observability/tracing.js';

/**
 * Credentials a caller sent, passed on untouched to every subgraph: each reads the one it uses; and
 * the `Idempotency-Key` of a mutation, which the subgraph that runs it keeps (lib/data/idempotency.ts).
 */
export const FORWARDED_HEADERS = ['authorization', 'x-api-key', 'cookie', 'idempotency-key'] as const;

/** What the gateway knows of the caller of one operation. */
export interface GatewayContext {
  forwardHeaders: Record<string, string>;
  requestId: string;
  /** The caller's address as the edge saw it (`TRUST_PROXY` applied); the subgraphs count sign-in mail per client with it. */
  clientAddress?: string;
  /**
   * Sets or clears the session cookie on the caller's HTTP answer, as the surveys subgraph asks
   * (`SESSION_COOKIE_EXTENSION`); absent where there is no HTTP answer (the REST adapters set their own).
   */
  setSessionCookie?: (change: SessionCookieChange) => void;
  /** The limits the operation's subgraphs counted (`RATE_LIMIT_EXTENSION`), gathered while it runs. */
  rateLimits?: RateLimitState[];
  /** Set when a subgraph answered a mutation again for its Idempotency-Key (`IDEMPOTENT_REPLAY_EXTENSION`). */
  idempotentReplay?: boolean;
}

export function forwardHeadersOf(headers: Record<string, string | string[] | undefined>): Record<string, string> {
  const picked: Record<string, string> = {};
  for (const name of FORWARDED_HEADERS) {
    const value = headers[name];
    if (value !== undefined) picked[name] = Array.isArray(value) ? value.join(', ') : value;
  }
  return picked;
}

export interface GraphQLResult<Data> {
  data?: Data | null;
  errors?: readonly GraphQLFormattedError[];
  extensions?: Record<string, unknown>;
}

/**
 * The results of one subscription: a refusal at subscribe is the first result (`errors` with their
 * `extensions.code`), then one result per event; it ends when the stream does. `return()` leaves it.
 */
export type SubscriptionResults<Data> = AsyncIterableIterator<GraphQLResult<Data>>;

/** Runs one GraphQL operation against the gateway, in process or over HTTP; adapters see no difference. */
export interface GraphQLClient {
  execute<Data = Record<string, unknown>>(
    query: string,
    variables: Record<string, unknown>,
    context: GatewayContext,
  ): Promise<GraphQLResult<Data>>;
  /** Runs one subscription operation as the caller, with the same rules as a client of the gateway's `/graphql`. */
  subscribe<Data = Record<string, unknown>>(
    query: string,
    variables: Record<string, unknown>,
    context: GatewayContext,
  ): SubscriptionResults<Data>;
}

/** The gateway's subscription executor, as the gateway in this process hands it to its REST adapters. */
export type SubscriptionExecutor = (
  request: { query: string; variables: Record<string, unknown> },
  context: GatewayContext,
) => AsyncIterableIterator<GraphQLResult<Record<string, unknown>>>;

/**
 * The gateway's short path for fixed operations (gateway/short-path.ts): an answer, or undefined when
 * the operation has none and takes Apollo's pipeline.
 */
export interface FixedOperations {
  run(
    query: string,
    variables: Record<string, unknown>,
    context: GatewayContext,
  ): Promise<GraphQLResult<unknown>> | undefined;
}

/**
 * The gateway in this process: Apollo's executeOperation runs the same pipeline as an HTTP request
 * (or the gateway's short path answers a fixed operation exactly as it would), and the gateway's live
 * graph (gateway/subscriptions) the same admission, caps and plan as its subscription transports.
 */
export function inProcessClient(
  apollo: ApolloServer<GatewayContext>,
  subscriptions: SubscriptionExecutor,
  fixedOperations?: FixedOperations,
): GraphQLClient {
  return {
    subscribe: <Data>(query: string, variables: Record<string, unknown>, context: GatewayContext) =>
      subscriptions({ query, variables }, context) as SubscriptionResults<Data>,
    async execute<Data>(query: string, variables: Record<string, unknown>, context: GatewayContext) {
      const short = fixedOperations?.run(query, variables, context);
      if (short) return (await short) as GraphQLResult<Data>;
      const response = await apollo.executeOperation<Data & Record<string, unknown>>(
        { query, variables },
        { contextValue: context },
      );
      if (response.body.kind !== 'single') throw new Error('incremental delivery is not used by the REST adapters');
      return response.body.singleResult as GraphQLResult<Data>;
    },
  };
}

/**
 * A gateway deployed apart (`GATEWAY_URL`). With the shared `SUBGRAPH_TOKEN`, the caller's address goes
 * along in `X-Platform-Client`, which the gateway believes from holders of that token only.
 */
export function httpClient(url: string, internalToken?: string): GraphQLClient {
  const headersOf = (context: GatewayContext): Record<string, string> => ({
    ...context.forwardHeaders,
    [REQUEST_ID_HEADER]: context.requestId,
    ...(internalToken && context.clientAddress
      ? { [CLIENT_ADDRESS_HEADER]: context.clientAddress, [SUBGRAPH_TOKEN_HEADER]: internalToken }
      : {}),
    ...traceHeaders(),
  });
  return {
    subscribe: <Data>(query: string, variables: Record<string, unknown>, context: GatewayContext) =>
      stoppable((signal) => overSse<Data>(url, { query, variables }, headersOf(context), signal)),
    async execute<Data>(query: string, variables: Record<string, unknown>, context: GatewayContext) {
      const response = await fetch(url, {
        method: 'POST',
        headers: {
          ...headersOf(context),
          'content-type': 'application/json',
          accept: 'application/graphql-response+json, application/json',
        },
        body: JSON.stringify({ query, variables }),
      });
      return (await response.json()) as GraphQLResult<Data>;
    },
  };
}

/**
 * A subscription to a gateway deployed apart over GraphQL over SSE (graphql-sse's client, one
 * connection per subscription). Nothing is retried here: a lost connection ends the results, and
 * whoever follows them resumes with its last cursor. A refusal the gateway answers before streaming
 * (a 4xx with `{ errors }`) is the first result, as it is in process. `signal` aborts when whoever
 * follows them leaves: the connection is hung up at once, not at the next event.
 */
async function* overSse<Data>(
  url: string,
  request: { query: string; variables: Record<string, unknown> },
  headers: Record<string, string>,
  signal: AbortSignal,
): AsyncGenerator<GraphQLResult<Data>> {
  const client = createClient({ url, retryAttempts: 0, headers });
  const results = client.iterate(request) as AsyncIterableIterator<GraphQLResult<Data>>;
  // graphql-sse's own return() hangs up at once, and its pending next() then ends.
  const forget = whenAborted(signal, () => void results.return?.());
  try {
    yield* results;
  } catch (error) {
    const refusal = error instanceof NetworkError ? await refusalOf(error.response as Response | undefined) : undefined;
    if (!refusal) throw error;
    yield refusal as GraphQLResult<Data>;
  } finally {
    forget();
    client.dispose();
  }
}

/** The `{ errors }` body of a gateway's refusal, if the answer is one. */
async function refusalOf(response: Response | undefined): Promise<GraphQLResult<unknown> | undefined> {
  if (!response || response.ok) return undefined;
  const body = (await response.json().catch(() => undefined)) as GraphQLResult<unknown> | undefined;
  return body?.errors?.length ? { errors: body.errors } : undefined;
}
