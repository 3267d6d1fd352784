import { optionalBearerPrincipal } from '../../lib/identity.js';
import type { Deps } from '../../lib/service.js';
import type { AuthContext } from '../../lib/shield.js';
import { startSubgraphService, type RunningSubgraph } from '../../lib/subgraph.js';
import { socialMigrations } from './migrations/index.js';
import { socialSubgraph } from './social.subgraph.js';

export function startSocialSubgraph(deps: Deps, options: { port: number; onQuery?: (sql: string) => void }): Promise<RunningSubgraph> {
  return startSubgraphService<AuthContext>(deps, {
    service: 'social',
    entities: [],
    migrations: socialMigrations,
    definition: socialSubgraph(),
    port: options.port,
    onQuery: options.onQuery,
    context: async (_orm, req) => ({ principal: await optionalBearerPrincipal(deps.identity, req.headers.authorization) }),
  });
}
