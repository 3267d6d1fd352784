import type { Deps } from '#lib/service.js';
import { startSubgraphService, type RunningSubgraph, type SubgraphListenOptions } from '#lib/subgraph/subgraph.js';
import { surveysMigrations } from './migrations/index.js';
import { createSurveysContext } from './surveys.context.js';
import { surveysEntities } from './surveys.entities.js';
import { createSurveysRuntime, type SurveysRuntime } from './surveys.runtime.js';
import { surveysSubgraph } from './surveys.subgraph.js';

export function startSurveysSubgraph(
  deps: Deps,
  options: SubgraphListenOptions,
): Promise<RunningSubgraph<SurveysRuntime>> {
  return startSubgraphService(deps, {
    service: 'surveys',
    entities: surveysEntities,
    migrations: surveysMigrations,
    definition: surveysSubgraph(),
    runtime: (orm) => createSurveysRuntime(deps, orm),
    context: createSurveysContext,
    ...options,
  });
}
