import { z } from 'zod';
import type { GraphQLDataSource, GraphQLDataSourceProcessOptions } from '@apollo/gateway';
import type { ApolloServerPlugin } from '@apollo/server';
import { IDEMPOTENT_REPLAY_EXTENSION } from '#lib/data/idempotency.js';
import { RATE_LIMIT_EXTENSION, rateLimitStatesSchema } from '#lib/http/rate-limit.js';
import { SESSION_COOKIE_EXTENSION, sessionCookieChangeSchema } from '#lib/http/session-cookie.js';
import type { GatewayContext } from '#lib/rest/graphql-client.js';

export type SubgraphResponse = Awaited<ReturnType<GraphQLDataSource['process']>>;

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
export function takeAnswerExtensions(
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
 * a GraphQL client may read them too. The short path states them with the same function.
 */
export function stateSubgraphFacts(
  contextValue: GatewayContext,
  result: { extensions?: Record<string, unknown> },
): void {
  if (contextValue.rateLimits?.length)
    result.extensions = { ...result.extensions, [RATE_LIMIT_EXTENSION]: contextValue.rateLimits };
  // A mutation answered again for its Idempotency-Key (lib/data/idempotency.ts), not run again.
  if (contextValue.idempotentReplay) result.extensions = { ...result.extensions, [IDEMPOTENT_REPLAY_EXTENSION]: true };
}

/** `stateSubgraphFacts` as an Apollo Server plugin, for the full path. */
export function answerSubgraphFacts(): ApolloServerPlugin<GatewayContext> {
  return {
    async requestDidStart() {
      return {
        async willSendResponse({ contextValue, response }) {
          if (response.body.kind !== 'single') return;
          stateSubgraphFacts(contextValue, response.body.singleResult);
        },
      };
    },
  };
}
