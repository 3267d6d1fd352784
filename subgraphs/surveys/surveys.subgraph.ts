import type { SubgraphDefinition } from '#lib/subgraph/federated-schema.js';
import { SurveyAssetResolver } from './assets/asset.resolver.js';
import { SurveyAuthResolver } from './sign-in/auth.resolver.js';
import { SurveyExportResolver } from './export/export.resolver.js';
import { ContactSurveysResolver } from './survey/contact.resolver.js';
import { SurveyContact } from './survey/contact.types.js';
import { HealthResolver } from './health/health.resolver.js';
import { SurveyResolver } from './survey/survey.resolver.js';
import { SurveyEventResolver } from './survey/survey-event.resolver.js';
import { surveysReferences } from './surveys.references.js';
import { surveysRules } from './surveys.rules.js';

export function surveysSubgraph(): SubgraphDefinition {
  return {
    resolvers: [
      SurveyResolver,
      SurveyEventResolver,
      SurveyAssetResolver,
      SurveyExportResolver,
      SurveyAuthResolver,
      ContactSurveysResolver,
      HealthResolver,
    ],
    // No field of this subgraph returns a Contact (the contacts subgraph resolves Survey.contact): named here, it stays.
    orphanedTypes: [SurveyContact],
    references: surveysReferences,
    rules: surveysRules(),
  };
}
