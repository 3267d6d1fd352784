import type { Config } from '#lib/config.js';
import type { SubgraphDefinition } from '#lib/subgraph/federated-schema.js';
import { AttachmentResolver } from './attachments/attachment.resolver.js';
import { ContactExportResolver } from './export/contact-export.resolver.js';
import { ContactImportResolver } from './import/contact-import.resolver.js';
import { ContactResolver } from './contact/contact.resolver.js';
import { ContactEventResolver } from './contact/contact-event.resolver.js';
import { ContactDuplicatesResolver, DuplicatePairsResolver } from './duplicates/duplicate.resolver.js';
import { MergeResolver } from './merge/merge.resolver.js';
import { SurveyContactResolver } from './merge/survey-contact.resolver.js';
import { ContactOfSurvey } from './merge/survey.types.js';
import { contactsReferences } from './contacts.references.js';
import { contactsRules } from './contacts.rules.js';
import { HealthResolver } from './health/health.resolver.js';
import { NoteResolver } from './notes/note.resolver.js';
import { PipelineResolver, StageResolver } from './pipelines/pipeline.resolver.js';

export function contactsSubgraph(config: Config): SubgraphDefinition {
  return {
    resolvers: [
      ContactResolver,
      ContactEventResolver,
      ContactDuplicatesResolver,
      DuplicatePairsResolver,
      MergeResolver,
      SurveyContactResolver,
      NoteResolver,
      AttachmentResolver,
      PipelineResolver,
      StageResolver,
      ContactImportResolver,
      ContactExportResolver,
      HealthResolver,
    ],
    // Survey is the surveys service's: no field here returns one, this subgraph only adds `contact` to it.
    orphanedTypes: [ContactOfSurvey],
    references: contactsReferences,
    rules: contactsRules(config),
  };
}
