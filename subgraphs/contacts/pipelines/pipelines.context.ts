import type DataLoader from 'dataloader';
import type { KeysetArgs, KeysetConnection } from '#lib/data/keyset.js';
import type { Contact } from '../contact/contact.entity.js';
import type { Stage } from './pipeline.entity.js';
import type { PipelineService } from './pipeline.service.js';

/** One page of one stage's contacts, as a board asks for it. */
export interface StagePage {
  stageId: string;
  args: KeysetArgs;
}

/** What the pipeline resolvers use of a request's context (contacts.context.ts makes it). */
export interface PipelinesContext {
  pipelines: PipelineService;
  stagesOfPipeline: DataLoader<string, Stage[]>;
  stageContactCount: DataLoader<string, number>;
  stageContacts: DataLoader<StagePage, KeysetConnection<Contact>, string>;
}
