import DataLoader from 'dataloader';
import type { EntityManager } from '../../lib/data/database.js';
import { bearerCallerOf } from '../../lib/identity.js';
import { batchLoader } from '../../lib/data/loaders.js';
import type { AuthContext } from '../../lib/subgraph/shield.js';
import type { SubgraphRequest } from '../../lib/subgraph/local-subgraph.js';
import { AttachmentService } from './attachment.service.js';
import { ContactExportService } from './contact-export.service.js';
import { ContactImportService } from './contact-import.service.js';
import type { Contact } from './contact.entity.js';
import { ContactService } from './contact.service.js';
import { NoteService } from './note.service.js';
import type { ContactsRuntime } from './contacts.runtime.js';
import type { Stage } from './pipeline.entity.js';
import { PipelineService } from './pipeline.service.js';

/** Everything a contacts resolver may use during one request: one entity manager fork, one principal. */
export interface ContactsContext extends AuthContext {
  em: EntityManager;
  contacts: ContactService;
  notes: NoteService;
  attachments: AttachmentService;
  pipelines: PipelineService;
  imports: ContactImportService;
  exports: ContactExportService;
  contactById: DataLoader<string, Contact | null>;
  stagesOfPipeline: DataLoader<string, Stage[]>;
  stageContactCount: DataLoader<string, number>;
  stageContacts: DataLoader<StageWindow, Contact[], string>;
}

interface StageWindow {
  stageId: string;
  offset: number;
  limit: number;
}

/** One request's context on `em`, the request's own fork: the caller (a bearer token, if any), the services, the loaders. */
export async function createContactsContext(
  runtime: ContactsRuntime,
  em: EntityManager,
  req: SubgraphRequest,
): Promise<ContactsContext> {
  const { principal, refusal } = await bearerCallerOf(runtime.identity, req.headers.authorization);
  const contacts = new ContactService(em, runtime.searchEstimates);
  const pipelines = new PipelineService(em, contacts);
  return {
    principal,
    refusal,
    em,
    contacts,
    notes: new NoteService(em, contacts),
    attachments: new AttachmentService(em, contacts, runtime.attachments),
    pipelines,
    imports: new ContactImportService(em, contacts, runtime.storage, runtime.importLimits),
    exports: new ContactExportService(runtime.exports),
    contactById: batchLoader(
      (ids) => contacts.findMany(ids),
      () => null,
    ),
    stagesOfPipeline: batchLoader(
      (pipelineIds) => pipelines.stagesOf(pipelineIds),
      () => [],
    ),
    stageContactCount: batchLoader(
      (stageIds) => pipelines.countsOf(stageIds),
      () => 0,
    ),
    // A board asks every stage for the same window, so one query per distinct window serves them all.
    stageContacts: new DataLoader(
      async (keys) => {
        const windows = new Map<string, StageWindow[]>();
        for (const key of keys) {
          const window = `${key.offset}:${key.limit}`;
          windows.set(window, [...(windows.get(window) ?? []), key]);
        }
        const answers = new Map<string, Contact[]>();
        for (const group of windows.values()) {
          const { offset, limit } = group[0];
          const byStage = await pipelines.contactsOf(
            group.map((key) => key.stageId),
            { offset, limit },
          );
          for (const key of group) answers.set(stageWindowKey(key), byStage.get(key.stageId) ?? []);
        }
        return keys.map((key) => answers.get(stageWindowKey(key)) ?? []);
      },
      { cacheKeyFn: stageWindowKey },
    ),
  };
}

function stageWindowKey(key: StageWindow): string {
  return `${key.stageId}:${key.offset}:${key.limit}`;
}
