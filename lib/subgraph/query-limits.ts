import { ApolloArmor } from '@escape.tech/graphql-armor';
import type { Config } from '../config.js';

/** Longest document a GraphQL face parses, in tokens: a longer one is a 400 before any work is spent on it. */
export const GRAPHQL_MAX_TOKENS = 5000;

/**
 * The query limits every GraphQL face applies (graphql-armor): the gateway, and each subgraph's own
 * port, which must not be the way around them. Depth, cost and aliases by armor; field suggestions
 * reveal schema names, so they are kept where introspection is open anyway. The token limit is
 * graphql-js's own (`parseOptions`, for Apollo Server): armor's throws from a plugin hook, which Apollo
 * answers as an internal error (500) although the document is the client's fault.
 */
export function queryLimits(
  config: Config,
): ReturnType<ApolloArmor['protect']> & { parseOptions: { maxTokens: number } } {
  const armor = new ApolloArmor({
    maxDepth: { n: config.env.GRAPHQL_MAX_DEPTH },
    costLimit: { maxCost: config.env.GRAPHQL_MAX_COST },
    maxAliases: { n: 30 },
    maxTokens: { enabled: false },
    blockFieldSuggestion: { enabled: config.isProduction },
  }).protect();
  return { ...armor, parseOptions: { maxTokens: GRAPHQL_MAX_TOKENS } };
}
