import { hasScope } from '#lib/identity.js';
import type { EntityReferences } from '#lib/subgraph/federated-schema.js';
import type { SurveyContact } from './survey/contact.types.js';
import type { Survey } from './survey/survey.entity.js';
import type { SurveysContext } from './surveys.context.js';

export const surveysReferences: EntityReferences<SurveysContext> = {
  /** Another subgraph (or the gateway) pointing at a survey sees it only when the caller may read it. */
  Survey: {
    __resolveReference: (reference, ctx): Promise<Survey | null> | null =>
      ctx.principal && hasScope(ctx.principal, 'surveys.read') ? ctx.surveyById.load(reference.id) : null,
  },
  /** The gateway asks for `Contact.surveys` with the contact's id and the ids merged into it. */
  Contact: {
    __resolveReference: (reference: { id: string; mergedIds?: string[] }): SurveyContact => ({
      id: reference.id,
      mergedIds: reference.mergedIds ?? [],
    }),
  },
};
