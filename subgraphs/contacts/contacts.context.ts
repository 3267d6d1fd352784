import { ContactEventService } from './contact/contact-event.service.js';
import DataLoader from 'dataloader';
import type { EntityManager } from '#lib/data/database.js';
import { bearerCallerOf } from '#lib/identity.js';
import type { KeysetArgs, KeysetConnection } from '#lib/data/keyset.js';
import { batchLoader } from '#lib/data/loaders.js';
import type { AuthContext } from '#lib/subgraph/shield.js';
import type { SubgraphRequest } from '#lib/subgraph/local-subgraph.js';
import { AttachmentService } from './attachments/attachment.service.js';
import type { AttachmentsContext } from './attachments/attachments.context.js';
import type { ContactContext } from './contact/contact.context.js';
import type { DuplicatesContext } from './duplicates/duplicates.context.js';
import type { MergeContext } from './merge/merge.context.js';
import { MergeService } from './merge/merge.service.js';
import { DuplicateService, type DuplicatesOf } from './duplicates/duplicate.service.js';
import type { ContactDuplicate } from './duplicates/duplicate.types.js';
import type { ExportContext } from './export/export.context.js';
import type { HealthContext } from './health/health.context.js';
import type { ImportContext } from './import/import.context.js';
import type { NotesContext } from './notes/notes.context.js';
import type { PipelinesContext, StagePage } from './pipelines/pipelines.context.js';
import { ContactExportService } from './export/contact-export.service.js';
import { ContactImportService } from './import/contact-import.service.js';
import type { Contact } from './contact/contact.entity.js';
import { ContactService } from './contact/contact.service.js';
import { NoteService } from './notes/note.service.js';
import type { ContactsRuntime } from './contacts.runtime.js';
import { PipelineService } from './pipelines/pipeline.service.js';

/**
 * Everything a contacts resolver may use during one request: one entity manager fork, one principal,
 * services bound to both, and the request's DataLoaders. Each feature folder declares the subset it uses
 * (`<feature>.context.ts`); this interface combines them all.
 */
export interface ContactsContext
  extends
    AuthContext,
    HealthContext,
    ContactContext,
    DuplicatesContext,
    MergeContext,
    NotesContext,
    AttachmentsContext,
    PipelinesContext,
    ImportContext,
    ExportContext {
  em: EntityManager;
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
  const duplicates = new DuplicateService(em);
  const merges = new MergeService(em);
  return {
    principal,
    refusal,
    em,
    contacts,
    contactEvents: new ContactEventService(runtime.contactFeed),
    notes: new NoteService(em, contacts),
    attachments: new AttachmentService(em, contacts, runtime.attachments),
    pipelines,
    imports: new ContactImportService(
      em,
      runtime.storage,
      runtime.importLimits,
      runtime.importQueue,
      principal?.userId ?? null,
    ),
    exports: new ContactExportService(runtime.exports),
    duplicates,
    merges,
    mergedIdsOf: batchLoader(
      (ids) => merges.mergedIdsOf(ids),
      () => [],
    ),
    survivorOf: batchLoader(
      (ids) => merges.survivorsOf(ids),
      () => null,
    ),
    // Keyed by contact and size: a list asks every contact with the same `first`, one statement for them all.
    duplicatesOf: new DataLoader<DuplicatesOf, ContactDuplicate[], string>(
      async (keys) => {
        const found = await duplicates.ofContacts(keys);
        return keys.map((key) => (found.get(key.contactId) ?? []).slice(0, key.first));
      },
      { cacheKeyFn: (key) => `${key.contactId}:${key.first}` },
    ),
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
    // A board asks every stage for the same page, so one query per distinct page serves them all.
    stageContacts: new DataLoader(
      async (keys) => {
        const pages = new Map<string, StagePage[]>();
        for (const key of keys) {
          const page = pageKey(key.args);
          pages.set(page, [...(pages.get(page) ?? []), key]);
        }
        const answers = new Map<string, KeysetConnection<Contact> | Error>();
        for (const group of pages.values()) {
          try {
            const byStage = await pipelines.contactsOf(
              group.map((key) => key.stageId),
              group[0].args,
            );
            for (const key of group) answers.set(stagePageKey(key), byStage.get(key.stageId)!);
          } catch (error) {
            // A rejected argument (a bad cursor) fails only the stages that asked with it, not the whole board.
            for (const key of group) answers.set(stagePageKey(key), error as Error);
          }
        }
        return keys.map((key) => answers.get(stagePageKey(key))!);
      },
      { cacheKeyFn: stagePageKey },
    ),
  };
}

function pageKey(args: KeysetArgs): string {
  return JSON.stringify([args.first ?? null, args.after ?? null, args.last ?? null, args.before ?? null]);
}

function stagePageKey(key: StagePage): string {
  return `${key.stageId}:${pageKey(key.args)}`;
}
