import { isAuthenticated } from '../../lib/shield.js';
import type { SubgraphDefinition } from '../../lib/subgraph.js';
import { ViewerResolver } from './viewer.resolver.js';

export function socialSubgraph(): SubgraphDefinition {
  return {
    resolvers: [ViewerResolver],
    rules: { Query: { viewer: isAuthenticated } },
  };
}
