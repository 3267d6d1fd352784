import type { Deps } from '../../lib/service.js';
import { startSubgraphService, type RunningSubgraph } from '../../lib/subgraph.js';
import { MagicLink, UserSession } from './sign-in.entity.js';
import { SurveyAsset } from './survey-asset.entity.js';
import { SurveyEvent } from './survey-event.entity.js';
import { Survey } from './survey.entity.js';
import { createSurveysContext, type SurveysContext } from './surveys.context.js';
import { createSurveysRuntime, type SurveysRuntime } from './surveys.runtime.js';
import { surveysSubgraph } from './surveys.subgraph.js';
import { surveysMigrations } from './migrations/index.js';

const surveysEntities = [Survey, SurveyAsset, SurveyEvent, MagicLink, UserSession];

export function startSurveysSubgraph(deps: Deps, options: { port: number; onQuery?: (sql: string) => void }): Promise<RunningSubgraph> {
  // Made once the database is up, so a failed start leaves no Redis or SMTP connection behind.
  let runtime: SurveysRuntime | undefined;
  return startSubgraphService<SurveysContext>(deps, {
    service: 'surveys',
    entities: surveysEntities,
    migrations: surveysMigrations,
    definition: surveysSubgraph(),
    port: options.port,
    onQuery: options.onQuery,
    afterOpen: async () => {
      runtime = createSurveysRuntime(deps.config, deps.logger);
      return runtime;
    },
    context: (orm, req) => createSurveysContext(orm, runtime!, req),
  });
}
