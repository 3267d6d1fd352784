import type { SubgraphDefinition } from '../../lib/subgraph/subgraph.js';
import { SurveyAssetResolver } from './asset.resolver.js';
import { SurveyAuthResolver } from './auth.resolver.js';
import { SurveyExportResolver } from './export.resolver.js';
import { ContactSurveysResolver } from './contact.resolver.js';
import { HealthResolver } from './health.resolver.js';
import { SurveyResolver } from './survey.resolver.js';
import { surveysReferences } from './surveys.references.js';
import { surveysRules } from './surveys.rules.js';

export function surveysSubgraph(): SubgraphDefinition {
  return {
    resolvers: [
      SurveyResolver,
      SurveyAssetResolver,
      SurveyExportResolver,
      SurveyAuthResolver,
      ContactSurveysResolver,
      HealthResolver,
    ],
    references: surveysReferences,
    rules: surveysRules(),
  };
}
