import { UniqueConstraintViolationException } from '@mikro-orm/core';
import type { EntityManager } from '#lib/data/database.js';
import { AppError, ErrorCode } from '#lib/errors.js';
import type { Logger } from '#lib/observability/logger.js';
import type { ObjectStorage } from '#lib/storage/storage.js';
import { dropUploadBytes } from '#lib/storage/uploads.js';
import type { ImportBatch } from './contact-import.batches.js';
import {
  csvRecords,
  mapColumns,
  parseMapping,
  type ImportLimits,
  type MappedColumn,
  type RowError,
} from './contact-import.csv.js';
import { ContactImport, ContactImportStatus, FINISHED_IMPORT_STATES } from './contact-import.entity.js';
import { batchesInThread, checkInThread } from './contact-import.thread.js';

/** The job stopped before its end without failing: the process is stopping, or its claim on the job was lost. */
export class ImportInterrupted extends Error {}

/** The import was cancelled (or otherwise finished) by someone else: the batch under way is not written. */
class ImportFinishedElsewhere extends Error {}

/** What one batch did. */
interface Outcome {
  created: number;
  updated: number;
  skipped: number;
  errors: RowError[];
  written: boolean;
}

/**
 * Runs one import job: the file is read once to check it (a broken file fails the import and writes
 * nothing), then again to write its rows in batches. Each batch is one transaction: its contacts,
 * its errors, its record and the import's progress, after checking that the import is still running
 * (a cancel is seen at the next batch). A job that stops half-way (the process stopped or was killed)
 * goes on from `nextRow`, so every row is written exactly once.
 */
export class ContactImportJob {
  private readonly schema: string;
  /** E-mail keys seen earlier in the file, on a dry run (nothing written tells later batches). */
  private readonly seen = new Set<string>();

  constructor(
    private readonly em: EntityManager,
    private readonly storage: ObjectStorage,
    private readonly limits: ImportLimits,
    private readonly logger: Logger,
    private readonly interrupted: () => boolean,
  ) {
    this.schema = String(em.config.get('schema'));
  }

  async run(importId: string): Promise<void> {
    const job = await this.em.findOne(ContactImport, { id: importId }, { disableIdentityMap: true });
    if (!job) return;
    if (FINISHED_IMPORT_STATES.includes(job.status)) return this.dropFile(job);
    if (job.status === ContactImportStatus.QUEUED) {
      const taken = await this.em.nativeUpdate(
        ContactImport,
        { id: job.id, status: ContactImportStatus.QUEUED },
        { status: ContactImportStatus.RUNNING, startedAt: new Date() },
      );
      if (!taken) return this.run(importId);
    }
    const log = this.logger.child({ importId: job.id });
    try {
      const columns = await this.readHeader(job);
      if (job.nextRow > 2) log.info({ nextRow: job.nextRow }, 'import resumed');
      await this.writeRows(job, columns);
      const finished = await this.em.nativeUpdate(
        ContactImport,
        { id: job.id, status: ContactImportStatus.RUNNING },
        { status: ContactImportStatus.SUCCEEDED, finishedAt: new Date() },
      );
      if (finished) log.info('import succeeded');
    } catch (error) {
      if (error instanceof ImportFinishedElsewhere) log.info('import cancelled');
      else if (error instanceof AppError) {
        await this.fail(job, error);
        log.info({ reason: error.message }, 'import failed: the file cannot be imported');
      } else throw error;
    }
    await this.dropFile(job);
  }

  /** Marks an import failed for good (an AppError: the caller's; anything else: ours, not told). */
  async fail(job: ContactImport, error: unknown): Promise<void> {
    const failure =
      error instanceof AppError
        ? { code: error.code, message: error.message, fields: error.fields }
        : { code: ErrorCode.INTERNAL_SERVER_ERROR, message: 'The import stopped on an internal error', fields: [] };
    await this.em.nativeUpdate(
      ContactImport,
      { id: job.id, status: { $in: [ContactImportStatus.QUEUED, ContactImportStatus.RUNNING] } },
      { status: ContactImportStatus.FAILED, failure, finishedAt: new Date() },
    );
  }

  async dropFile(job: ContactImport): Promise<void> {
    await dropUploadBytes(this.storage, [job.storageKey]).catch((error: unknown) =>
      this.logger.warn({ err: error, importId: job.id }, 'an imported file could not be deleted'),
    );
  }

  /** The columns to read; on the first run the whole file is checked first and its row count kept. */
  private async readHeader(job: ContactImport): Promise<MappedColumn[]> {
    const mapping = parseMapping(job.mapping);
    if (job.rows === null) {
      const { header, rows } = await checkInThread((await this.storage.open(job.storageKey)).stream, this.limits);
      const columns = mapColumns(header, mapping);
      await this.em.nativeUpdate(ContactImport, { id: job.id }, { rows });
      job.rows = rows;
      return columns;
    }
    for await (const header of await csvRecords(this.storage, job.storageKey, this.limits)) {
      return mapColumns(
        header.map((cell) => cell.trim()),
        mapping,
      );
    }
    throw AppError.badInput('file', 'is empty');
  }

  /**
   * Commits the file's batches in file order, at most one commit in flight: the import's thread
   * (contact-import.thread.ts) reads and checks the next batch while the database writes the one before.
   */
  private async writeRows(job: ContactImport, columns: MappedColumn[]): Promise<void> {
    const { stream } = await this.storage.open(job.storageKey);
    let inFlight: Promise<void> | undefined;
    for await (const batch of batchesInThread(stream, this.limits, { columns, nextRow: job.nextRow })) {
      if (inFlight) await inFlight;
      inFlight = this.commit(job, batch);
      // Its failure is met at the next await of it; until then it must not count as unhandled.
      inFlight.catch(() => undefined);
    }
    if (inFlight) await inFlight;
  }

  /** Writes one batch and the import's progress in one transaction. */
  private async commit(job: ContactImport, batch: ImportBatch): Promise<void> {
    if (this.interrupted()) throw new ImportInterrupted('the import was interrupted; it goes on from its last batch');
    const outcome = await this.em.fork().transactional(async (tx) => {
      const [state] = await tx.execute<{ status: ContactImportStatus }[]>(
        `select status from "${this.schema}".contact_import where id = ? for update`,
        [job.id],
      );
      if (state?.status !== ContactImportStatus.RUNNING) throw new ImportFinishedElsewhere();
      const done = job.dryRun ? await this.foresee(tx, batch) : await this.write(tx, batch);
      await this.record(tx, job, batch, done);
      return done;
    });
    job.nextRow = batch.lastRow + 1;
    job.errorCount += outcome.errors.length;
  }

  /** The batch's contacts: e-mail matches among live contacts update, the others are created (one statement). */
  private async write(tx: EntityManager, batch: ImportBatch): Promise<Outcome> {
    const outcome: Outcome = { created: 0, updated: 0, skipped: batch.invalid, errors: batch.errors, written: true };
    if (!batch.rowCount) return outcome;
    try {
      // A savepoint: a batch that cannot be written still records its errors and the progress.
      const [counts] = await tx.transactional((inner) =>
        inner.execute<{ created: number; updated: number }[]>(this.upsertSql(), [batch.rowsJson]),
      );
      outcome.created = counts.created;
      outcome.updated = counts.updated + batch.merged;
    } catch (error) {
      // Another writer took one of these e-mail addresses meanwhile: this batch is rolled back,
      // reported, and the import goes on with the next one.
      if (!(error instanceof UniqueConstraintViolationException)) throw error;
      const [first, last] = [batch.firstValid, batch.lastValid];
      outcome.written = false;
      outcome.skipped += batch.rowCount + batch.merged;
      outcome.errors = [
        ...batch.errors,
        {
          row: first,
          column: null,
          message: `rows ${first} to ${last} were not written: an e-mail address was taken meanwhile; import them again`,
        },
      ];
    }
    return outcome;
  }

  /** A dry run's batch: what it would create and update, from the live contacts and the rows before it. */
  private async foresee(tx: EntityManager, batch: ImportBatch): Promise<Outcome> {
    const keys = batch.emailKeys;
    const existing = new Set(
      keys.length
        ? (
            await tx.execute<{ key: string }[]>(
              `select lower(email) as key from "${this.schema}".contact
               where not deleted and email is not null
                 and lower(email) in (select jsonb_array_elements_text(?::jsonb))`,
              [JSON.stringify(keys)],
            )
          ).map(({ key }) => key)
        : [],
    );
    let updated = batch.merged;
    for (const key of keys) {
      if (existing.has(key) || this.seen.has(key)) updated++;
      this.seen.add(key);
    }
    const created = batch.rowCount + batch.merged - updated;
    return { created, updated, skipped: batch.invalid, errors: batch.errors, written: false };
  }

  private async record(tx: EntityManager, job: ContactImport, batch: ImportBatch, outcome: Outcome): Promise<void> {
    const schema = this.schema;
    if (outcome.errors.length) {
      await tx.execute(
        `insert into "${schema}".contact_import_error (import_id, seq, row, "column", message)
         select ?, seq, row, col, message from jsonb_to_recordset(?::jsonb) as e(seq int, row int, col text, message text)`,
        [
          job.id,
          JSON.stringify(
            outcome.errors.map((error, index) => ({
              seq: job.errorCount + index + 1,
              row: error.row,
              col: error.column,
              message: error.message,
            })),
          ),
        ],
      );
    }
    if (batch.rowCount && !job.dryRun) {
      await tx.execute(
        `insert into "${schema}".contact_import_batch (import_id, first_row, last_row, created, updated, written)
         values (?, ?, ?, ?, ?, ?)`,
        [job.id, batch.firstValid, batch.lastValid, outcome.created, outcome.updated, outcome.written],
      );
    }
    await tx.execute(
      `update "${schema}".contact_import set next_row = ?, processed = ? - 1, created = created + ?,
         updated = updated + ?, skipped = skipped + ?, error_count = error_count + ? where id = ?`,
      [
        batch.lastRow + 1,
        batch.lastRow,
        outcome.created,
        outcome.updated,
        outcome.skipped,
        outcome.errors.length,
        job.id,
      ],
    );
  }

  /**
   * One statement per batch: the rows arrive as one JSON parameter (no parameter limit, one parse);
   * matches update the live contact with the same e-mail (blank cells leave a field as it was), and the
   * rest are inserted. Both parts see the same snapshot, so a row is either updated or inserted.
   */
  private upsertSql(): string {
    const contact = `"${this.schema}".contact`;
    const tags = (fallback: string) =>
      `case when i.tags is null then ${fallback} else array(select jsonb_array_elements_text(i.tags)) end`;
    return `with input as (
        select * from jsonb_to_recordset(?::jsonb) as i(first_name text, last_name text, email text,
          email_key text, phone text, company text, tags jsonb)
      ),
      matched as (
        update ${contact} c set
          first_name = coalesce(i.first_name, c.first_name), last_name = coalesce(i.last_name, c.last_name),
          email = coalesce(i.email, c.email), phone = coalesce(i.phone, c.phone),
          company = coalesce(i.company, c.company), tags = ${tags('c.tags')}, updated_at = now()
        from input i
        where i.email_key is not null and lower(c.email) = i.email_key and not c.deleted and c.email is not null
        returning i.email_key
      ),
      inserted as (
        insert into ${contact} (id, first_name, last_name, email, phone, company, tags, created_at, updated_at)
        select gen_random_uuid(), i.first_name, i.last_name, i.email, i.phone, i.company, ${tags("'{}'")}, now(), now()
        from input i
        where i.email_key is null or not exists (select 1 from matched m where m.email_key = i.email_key)
        returning 1
      )
      select (select count(*) from inserted)::int as created, (select count(*) from matched)::int as updated`;
  }
}
