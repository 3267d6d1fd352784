import type { Deps } from '../../lib/service.js';
import type { AuthContext } from '../../lib/shield.js';
import { startSubgraphService, type RunningSubgraph } from '../../lib/subgraph.js';
import { surveysMigrations } from './migrations/index.js';
import { surveysSubgraph } from './surveys.subgraph.js';

export function startSurveysSubgraph(deps: Deps, options: { port: number; onQuery?: (sql: string) => void }): Promise<RunningSubgraph> {
  return startSubgraphService<AuthContext>(deps, {
    service: 'surveys',
    entities: [],
    migrations: surveysMigrations,
    definition: surveysSubgraph(),
    port: options.port,
    onQuery: options.onQuery,
    context: async () => ({ principal: null }),
  });
}
