import { EventFeed } from '#lib/data/event-feed.js';
import { ContactEvent } from './contact/contact-event.entity.js';
import { sweepContactEvents } from './contact/contact-event.service.js';
import pg from 'pg';
import type { Orm } from '#lib/data/database.js';
import { jobQueueConnections } from '#lib/data/job-queue.js';
import type { Identity } from '#lib/identity.js';
import { deriveKeys, masterKeys } from '#lib/secrets.js';
import type { Deps } from '#lib/service.js';
import { createStorage } from '#lib/storage/create-storage.js';
import type { ObjectStorage } from '#lib/storage/storage.js';
import { startUploadSweeper } from '#lib/storage/uploads.js';
import { sweepExpiredKeys } from '#lib/data/idempotency.js';
import { sweepAttachmentUploads, type AttachmentSettings } from './attachments/attachment.service.js';
import type { ContactExportSettings } from './export/contact-export.service.js';
import type { ImportLimits } from './import/contact-import.csv.js';
import { ContactImportQueue } from './import/contact-import.queue.js';
import { sweepImportUploads } from './import/contact-import.service.js';
import { ContactService, createSearchEstimates, type SearchEstimates } from './contact/contact.service.js';
import type { Contact } from './contact/contact.entity.js';
import { DuplicateService, PAIRS_REFRESH_MS } from './duplicates/duplicate.service.js';

/** What the contacts subgraph keeps for its whole life; each request's context is built on it. */
export interface ContactsRuntime {
  /** Its job queue's own pool and the exports' copy pool (the connection budget). */
  connections: Record<string, number>;
  /** Verifies bearer tokens (demanded only with `CONTACTS_AUTH=required`). */
  identity: Identity;
  /** Attachment bytes and uploaded CSV files. */
  storage: ObjectStorage;
  attachments: AttachmentSettings;
  importLimits: ImportLimits;
  /** Background imports (pg-boss); this process works on them too. */
  importQueue: ContactImportQueue;
  exports: ContactExportSettings;
  /** PostgreSQL's estimates of recent searches (ContactService.list). */
  searchEstimates: SearchEstimates;
  /** The contact event log as it grows, which `contactEvents` subscriptions follow (one reader per process). */
  contactFeed: EventFeed<ContactEvent, Contact>;
  close(): Promise<void>;
}

/**
 * Exports running at once on PostgreSQL, each on a connection of its own for as long as its client
 * reads; one more waits for a connection. Two keep the ORM's pool and the server's cores for the service's requests.
 */
export const EXPORT_CONNECTIONS = 2;

export async function createContactsRuntime(deps: Deps, orm: Orm): Promise<ContactsRuntime> {
  const storage = createStorage(deps.config);
  const searchEstimates = createSearchEstimates();
  // The contact each event names, read once for all subscribers of a batch (`Subscription.contactEvents { contact }`).
  const contactFeed = await EventFeed.forEntity(deps.config, orm, ContactEvent, 'contacts', deps.logger, {
    idOf: (event) => event.contactId,
    load: (ids) => new ContactService(orm.em.fork(), searchEstimates).findMany(ids),
  });
  // Attachments and imports reserved and never completed go, rows and bytes, once their window closed.
  // The same round drops Idempotency-Key records past their window, of callers who never came back.
  const sweeper = startUploadSweeper({
    name: 'contacts',
    logger: deps.logger,
    sweep: async (now) => {
      await sweepExpiredKeys(orm.em.fork());
      await sweepContactEvents(orm.em.fork(), now);
      return (
        (await sweepAttachmentUploads(orm.em.fork(), storage, now)) +
        (await sweepImportUploads(orm.em.fork(), storage, now))
      );
    },
  });
  const importLimits: ImportLimits = {
    maxBytes: deps.config.env.IMPORT_MAX_BYTES,
    maxRows: deps.config.env.IMPORT_MAX_ROWS,
    maxColumns: deps.config.env.IMPORT_MAX_COLUMNS,
    maxRecordBytes: deps.config.env.IMPORT_MAX_RECORD_BYTES,
  };
  const databaseUrl = deps.config.env.DATABASE_URL;
  const copyPool = databaseUrl
    ? new pg.Pool({ connectionString: databaseUrl, max: EXPORT_CONNECTIONS, idleTimeoutMillis: 10_000 })
    : null;
  // An idle connection the server drops must not take the process down (pg re-emits it on the pool).
  copyPool?.on('error', (error) => deps.logger.warn({ reason: error.message }, 'contact export connection lost'));
  // The book's duplicate pairs stay within a minute of the contacts: recomputed only when they changed,
  // and never twice at once (a large book takes longer than the interval; another instance may hold it).
  let refreshing: Promise<unknown> | undefined;
  const pairsTimer = setInterval(() => {
    refreshing ??= new DuplicateService(orm.em.fork())
      .refreshPairs()
      .catch((error: Error) => deps.logger.warn({ reason: error.message }, 'duplicate pairs not refreshed'))
      .finally(() => (refreshing = undefined));
  }, PAIRS_REFRESH_MS);
  pairsTimer.unref();
  const importQueue = await ContactImportQueue.start(deps.config, orm, {
    storage,
    limits: importLimits,
    logger: deps.logger,
  });
  return {
    connections: { queue: jobQueueConnections(deps.config), exports: copyPool ? EXPORT_CONNECTIONS : 0 },
    identity: deps.identity,
    storage,
    attachments: {
      storage,
      maxBytes: deps.config.env.ATTACHMENT_MAX_BYTES,
      signingKey: deriveKeys(masterKeys(deps.config), 'contact-attachment-uploads'),
    },
    importLimits,
    importQueue,
    exports: { signingKey: deriveKeys(masterKeys(deps.config), 'contact-exports'), copyPool },
    searchEstimates,
    contactFeed,
    // Storage holds no connection of its own to close.
    close: async () => {
      clearInterval(pairsTimer);
      await refreshing;
      await contactFeed.close();
      await sweeper.stop();
      await importQueue.stop();
      await copyPool?.end();
    },
  };
}
