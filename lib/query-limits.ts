import { ApolloArmor } from '@escape.tech/graphql-armor';
import type { Config } from './config.js';

/**
 * The query limits every GraphQL face applies (graphql-armor): the gateway, and each subgraph's own
 * port, which must not be the way around them. Depth, cost, aliases and tokens; field suggestions
 * reveal schema names, so they are kept where introspection is open anyway.
 */
export function queryLimits(config: Config): ReturnType<ApolloArmor['protect']> {
  return new ApolloArmor({
    maxDepth: { n: config.env.GRAPHQL_MAX_DEPTH },
    costLimit: { maxCost: config.env.GRAPHQL_MAX_COST },
    maxAliases: { n: 30 },
    maxTokens: { n: 5000 },
    blockFieldSuggestion: { enabled: config.isProduction },
  }).protect();
}
