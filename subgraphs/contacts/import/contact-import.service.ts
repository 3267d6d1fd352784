import { setTimeout as sleep } from 'node:timers/promises';
import type { EntityManager } from '#lib/data/database.js';
import {
  keysetConnection,
  keysetSql,
  keysetWindow,
  orderByText,
  type Keyset,
  type KeysetArgs,
} from '#lib/data/keyset.js';
import type { Connection } from '#lib/data/pagination.js';
import { AppError, ErrorCode, isErrorCode } from '#lib/errors.js';
import { isUuid } from '#lib/ids.js';
import type { ObjectStorage } from '#lib/storage/storage.js';
import {
  commitUpload,
  dropUploadBytes,
  stagingKeyOf,
  sweepReservations,
  type UploadPolicy,
} from '#lib/storage/uploads.js';
import { parseMapping, type ImportLimits } from './contact-import.csv.js';
import { ContactImport, ContactImportStatus, FINISHED_IMPORT_STATES, ImportUpload } from './contact-import.entity.js';
import type { ContactImportQueue } from './contact-import.queue.js';
import type { ImportResult, ImportRowError, ImportUploadSlot } from './contact-import.types.js';

const UPLOAD_WINDOW_MS = 15 * 60 * 1000;
/** Row errors the legacy answer lists; all of them are in `errors.csv`. */
const MAX_LISTED_ERRORS = 1000;
/** Row errors one page may hold: `errors.csv` walks a million of them in pages this size. */
export const MAX_ERRORS_PAGE = 1000;

interface ImportErrorRow extends ImportRowError {
  /** Position of the error in its import, from 1: the key of the list. */
  seq: number;
}

const IMPORT_ERRORS_KEYSET: Keyset<ImportErrorRow> = {
  direction: 'asc',
  parts: [{ column: 'seq', kind: 'sequence', of: (error) => error.seq }],
};
/** How often a waiting import request looks at its job; a small file is done within a few looks. */
const WAIT_STEPS_MS = [20, 50, 100, 200, 400];

export interface ImportRequest {
  uploadId: string;
  /** CSV column -> contact field (null ignores a column), as GraphQL's JSONObject brings it; checked by `parseMapping`. */
  mapping: Record<string, unknown> | null | undefined;
  dryRun: boolean;
  /** SHA-256 (hex) of the file as it was sent; when given, the stored bytes must match it. */
  sha256?: string | null;
}

/**
 * CSV imports. The file comes on the platform's upload protocol (`lib/storage/uploads.ts`; bytes never
 * travel through GraphQL): `reserve` answers a staging key, the caller stores the bytes there, and
 * `start` commits them (within IMPORT_MAX_BYTES, text by their first bytes) and queues the import job
 * (`contact-import.job.ts`) in the same transaction as its row. `importAndWait` is the legacy request:
 * it starts the job and answers its summary once it ends.
 */
export class ContactImportService {
  constructor(
    private readonly em: EntityManager,
    private readonly storage: ObjectStorage,
    private readonly limits: ImportLimits,
    private readonly queue: ContactImportQueue,
    private readonly caller: string | null,
  ) {}

  private get policy(): UploadPolicy {
    return { maxBytes: this.limits.maxBytes, allowedTypes: ['text/csv'] };
  }

  async reserve(): Promise<ImportUploadSlot> {
    const upload = new ImportUpload();
    upload.storageKey = `imports/${upload.id}.csv`;
    upload.uploadExpiresAt = new Date(Date.now() + UPLOAD_WINDOW_MS);
    await this.em.persist(upload).flush();
    return {
      uploadId: upload.id,
      storageKey: stagingKeyOf(upload.storageKey),
      maxBytes: this.limits.maxBytes,
      expiresAt: upload.uploadExpiresAt,
    };
  }

  /** Commits the uploaded file and queues its import; the reservation becomes the import. */
  async start(request: ImportRequest): Promise<ContactImport> {
    const upload = isUuid(request.uploadId) ? await this.em.findOne(ImportUpload, { id: request.uploadId }) : null;
    if (!upload) throw AppError.badInput('uploadId', 'is not an uploaded import file');
    let mapping: ReturnType<typeof parseMapping>;
    try {
      mapping = parseMapping(request.mapping);
      await commitUpload(
        this.storage,
        { key: upload.storageKey, contentType: 'text/csv', size: null, expiresAt: upload.uploadExpiresAt },
        this.policy,
        { sha256: request.sha256 },
      );
    } catch (error) {
      // Another import of the same file holds it (and ends it); any other refusal ends the upload here.
      if (!(error instanceof AppError && error.code === ErrorCode.CONFLICT))
        await this.cancel(upload.id).catch(() => undefined);
      throw inImportTerms(error);
    }
    const job = new ContactImport();
    job.storageKey = upload.storageKey;
    job.mapping = mapping ? Object.fromEntries(mapping) : null;
    job.dryRun = request.dryRun;
    job.createdBy = this.caller;
    await this.em.transactional(async (tx) => {
      tx.persist(job);
      await tx.nativeDelete(ImportUpload, { id: upload.id });
      await tx.flush();
      await this.queue.send(tx, job.id);
    });
    this.queue.wake();
    return job;
  }

  /** The legacy request: the import runs as a job all the same, and the answer waits for its end. */
  async importAndWait(request: ImportRequest): Promise<ImportResult> {
    // Under an Idempotency-Key the whole mutation is one transaction (lib/subgraph/idempotent-operations.ts):
    // its job would stay unseen by the workers until it commits, so waiting for it would never end.
    if (this.em.isInTransaction())
      throw AppError.badInput(
        'Idempotency-Key',
        'importContacts waits for its import, which cannot run under a key: use startContactImport, then contactImportResult',
      );
    const started = await this.start(request);
    return (await this.resultOf(started.id))!;
  }

  /** Once the import has ended: what it did (the legacy answer), or its failure as the error; null when there is none. */
  async resultOf(id: string): Promise<ImportResult | null> {
    if (!(await this.get(id))) return null;
    const job = await this.waitFor(id);
    if (job.status === ContactImportStatus.FAILED) throw failureOf(job);
    return this.summaryOf(job);
  }

  async get(id: string): Promise<ContactImport | null> {
    if (!isUuid(id)) return null;
    return this.em.findOne(ContactImport, { id }, { disableIdentityMap: true });
  }

  /**
   * The import as it is, then each time it changes (and at least once a second while it runs),
   * ending with the answer in which it is over. An unknown id is NOT_FOUND before anything is sent.
   * The job row is what the worker writes with each batch, so a look at it every `IMPORT_POLL_MS`
   * sees every step of progress, whichever process runs the import.
   */
  async follow(id: string): Promise<AsyncIterableIterator<ContactImport>> {
    const first = await this.get(id);
    if (!first) throw AppError.notFound('Contact import');
    const read = () => this.get(id);
    async function* progress(): AsyncGenerator<ContactImport> {
      let job: ContactImport | null = first;
      let last = '';
      let sentAt = 0;
      while (job) {
        const seen = progressOf(job);
        const over = FINISHED_IMPORT_STATES.includes(job.status);
        if (seen !== last || over || Date.now() - sentAt >= IMPORT_HEARTBEAT_MS) {
          last = seen;
          sentAt = Date.now();
          yield job;
        }
        if (over) return;
        await sleep(IMPORT_POLL_MS);
        job = await read();
      }
    }
    return progress();
  }

  /** Cancels a queued or running import (written batches stay); an import already over is left as it is. */
  async cancelJob(id: string): Promise<ContactImport> {
    const job = await this.get(id);
    if (!job) throw AppError.notFound('Contact import');
    await this.em.nativeUpdate(
      ContactImport,
      { id, status: { $in: [ContactImportStatus.QUEUED, ContactImportStatus.RUNNING] } },
      { status: ContactImportStatus.CANCELLED, finishedAt: new Date() },
    );
    return (await this.get(id))!;
  }

  /** A page of the row errors of an import, in file order (keyset on their position in the import). */
  async errors(job: ContactImport, args: KeysetArgs): Promise<Connection<ImportRowError>> {
    const window = keysetWindow(IMPORT_ERRORS_KEYSET, args, { defaultSize: 100, maxSize: MAX_ERRORS_PAGE });
    const sql = keysetSql(IMPORT_ERRORS_KEYSET, window);
    const rows = await this.em.getConnection().execute<ImportErrorRow[]>(
      `select seq, row, "column", message from "${this.schema}".contact_import_error
       where import_id = ? ${sql.conditions.map((condition) => `and ${condition.sql}`).join(' ')}
       order by ${orderByText(sql)} limit ?`,
      [job.id, ...sql.conditions.flatMap((condition) => condition.params), sql.limit],
    );
    const page = keysetConnection(IMPORT_ERRORS_KEYSET, window, rows, ({ row, column, message }) => ({
      row,
      column,
      message,
    }));
    // A total costs nothing here: the import counts its errors as it writes them.
    return { ...page, totalCount: job.errorCount, totalExact: true };
  }

  /** Ends a reservation that will not be imported (its upload failed): row and bytes. False when there was none. */
  async cancel(uploadId: string): Promise<boolean> {
    const upload = isUuid(uploadId) ? await this.em.findOne(ImportUpload, { id: uploadId }) : null;
    if (!upload) return false;
    await dropUploadBytes(this.storage, [upload.storageKey]);
    await this.em.nativeDelete(ImportUpload, { id: upload.id });
    return true;
  }

  private get schema(): string {
    return String(this.em.config.get('schema'));
  }

  private async waitFor(id: string): Promise<ContactImport> {
    for (let look = 0; ; look++) {
      const job = await this.get(id);
      if (!job) throw AppError.notFound('Contact import');
      if (FINISHED_IMPORT_STATES.includes(job.status)) return job;
      await sleep(WAIT_STEPS_MS[Math.min(look, WAIT_STEPS_MS.length - 1)]);
    }
  }

  /** The legacy answer: counts, the first row errors, and the batches in file order. */
  private async summaryOf(job: ContactImport): Promise<ImportResult> {
    const { nodes: errors, pageInfo } = await this.errors(job, { first: MAX_LISTED_ERRORS });
    const batches = await this.em
      .getConnection()
      .execute<{ firstRow: number; lastRow: number; created: number; updated: number; written: boolean }[]>(
        `select first_row as "firstRow", last_row as "lastRow", created, updated, written
       from "${this.schema}".contact_import_batch where import_id = ? order by first_row`,
        [job.id],
      );
    return {
      rows: job.rows ?? 0,
      created: job.created,
      updated: job.updated,
      skipped: job.skipped,
      errors,
      errorsTruncated: pageInfo.hasNextPage,
      batches,
    };
  }
}

/** Deletes the import files reserved and never imported, once their window closed: rows and bytes (every row is pending). */
export function sweepImportUploads(em: EntityManager, storage: ObjectStorage, now = new Date()): Promise<number> {
  return sweepReservations(em, storage, ImportUpload, {}, now);
}

/** A failed import's reason as the error the import request answers. */
function failureOf(job: ContactImport): AppError {
  const failure = job.failure;
  const code = isErrorCode(failure?.code) ? failure.code : ErrorCode.INTERNAL_SERVER_ERROR;
  return new AppError(code, failure?.message ?? 'The import failed', { fields: failure?.fields ?? [] });
}

/** A refused upload commit as an import names it: bytes that are not UTF-8 text are not a CSV file. */
function inImportTerms(error: unknown): unknown {
  if (error instanceof AppError && error.fields[0]?.field === 'contentType')
    return AppError.badInput('file', 'is not a CSV file: it is not UTF-8 text');
  return error;
}

/** How often a followed import is looked at (`ContactImportService.follow`). */
const IMPORT_POLL_MS = 250;
/** A running import is answered at least this often, changed or not (a progress bar knows it lives). */
const IMPORT_HEARTBEAT_MS = 1000;

/** What a follower of an import sees change. */
function progressOf(job: ContactImport): string {
  return JSON.stringify([job.status, job.rows, job.processed, job.created, job.updated, job.skipped, job.errorCount]);
}
