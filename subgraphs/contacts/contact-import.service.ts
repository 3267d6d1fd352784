import { Transform } from 'node:stream';
import { UniqueConstraintViolationException } from '@mikro-orm/core';
import { CsvError, parse } from 'csv-parse';
import { validate } from 'class-validator';
import type { EntityManager } from '../../lib/data/database.js';
import { AppError, ErrorCode, type FieldProblem } from '../../lib/errors.js';
import { isUuid } from '../../lib/ids.js';
import type { ObjectStorage } from '../../lib/storage/storage.js';
import {
  commitUpload,
  dropUploadBytes,
  stagingKeyOf,
  sweepReservations,
  type UploadPolicy,
} from '../../lib/storage/uploads.js';
import { ImportUpload } from './contact-import.entity.js';
import { ContactImportResult } from './contact-import.result.js';
import { Contact, EDITABLE_FIELDS } from './contact.entity.js';
import { ContactInput } from './contact.input.js';
import { hasIdentity, type ContactService } from './contact.service.js';
import type { ImportResult, ImportUploadSlot } from './contact-import.types.js';

type ImportField = (typeof EDITABLE_FIELDS)[number];

/** Header spellings understood without a mapping, compared without case, spaces or punctuation. */
const HEADER_ALIASES: Record<string, ImportField> = {
  firstname: 'firstName',
  givenname: 'firstName',
  first: 'firstName',
  lastname: 'lastName',
  surname: 'lastName',
  familyname: 'lastName',
  last: 'lastName',
  email: 'email',
  emailaddress: 'email',
  mail: 'email',
  phone: 'phone',
  phonenumber: 'phone',
  telephone: 'phone',
  mobile: 'phone',
  company: 'company',
  organization: 'company',
  organisation: 'company',
  tags: 'tags',
  tag: 'tags',
  labels: 'tags',
};

const IMPORT_BATCH_SIZE = 1000;
const UPLOAD_WINDOW_MS = 15 * 60 * 1000;
/** How long a committed file may take to be read before the sweep may take it. */
const READING_WINDOW_MS = 60 * 60 * 1000;

interface MappedColumn {
  index: number;
  column: string;
  field: ImportField;
}

interface ReadyRow {
  row: number;
  values: ContactInput;
}

const normalizeHeader = (header: string) => header.toLowerCase().replace(/[^a-z0-9]/g, '');

/** How much one CSV import may hold (`IMPORT_MAX_BYTES`, `IMPORT_MAX_ROWS`, `IMPORT_MAX_COLUMNS`, `IMPORT_MAX_RECORD_BYTES`). */
export interface ImportLimits {
  maxBytes: number;
  maxRows: number;
  maxColumns: number;
  /** Characters one record (one field or line being read) may reach; csv-parse would otherwise buffer a whole file as one field. */
  maxRecordBytes: number;
}

/**
 * CSV import. The file comes on the platform's upload protocol (`lib/storage/uploads.ts`; bytes never travel
 * through GraphQL): `reserve` answers a staging key, the caller stores the bytes there, and `import`
 * commits them (within IMPORT_MAX_BYTES, text by their first bytes) and reads them twice as a stream:
 * once to check it is CSV at all (so a broken file writes nothing), once to validate each row and
 * write valid ones in batches, each batch in one transaction. A row whose e-mail matches a live contact
 * updates it; a row with errors is skipped and reported. The file and its reservation go afterwards.
 */
export class ContactImportService {
  private readonly schema: string;

  constructor(
    private readonly em: EntityManager,
    private readonly contacts: ContactService,
    private readonly storage: ObjectStorage,
    private readonly limits: ImportLimits,
  ) {
    this.schema = String(em.config.get('schema'));
  }

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

  async import(uploadId: string, mappingText: string | null | undefined): Promise<ImportResult> {
    const upload = isUuid(uploadId) ? await this.em.findOne(ImportUpload, { id: uploadId }) : null;
    if (!upload) throw AppError.badInput('uploadId', 'is not an uploaded import file');
    // This import ends the upload (row and bytes) whatever its outcome, unless another import of the same
    // file holds it: that one ends it.
    let ownsUpload = true;
    try {
      const mapping = parseMapping(mappingText);
      try {
        await commitUpload(
          this.storage,
          { key: upload.storageKey, contentType: 'text/csv', size: null, expiresAt: upload.uploadExpiresAt },
          this.policy,
        );
      } catch (error) {
        if (error instanceof AppError && error.code === ErrorCode.CONFLICT) ownsUpload = false;
        throw inImportTerms(error);
      }
      // Being read now: the sweep leaves it alone however long a large file takes.
      await this.em.nativeUpdate(
        ImportUpload,
        { id: upload.id },
        { uploadExpiresAt: new Date(Date.now() + READING_WINDOW_MS) },
      );
      const header = await this.checkCsv(upload.storageKey);
      const columns = mapColumns(header, mapping);
      return await this.writeRows(upload.storageKey, header, columns);
    } finally {
      if (ownsUpload) await this.drop(upload).catch(() => undefined);
    }
  }

  /** Ends a reservation that will not be imported (its upload failed): row and bytes. False when there was none. */
  async cancel(uploadId: string): Promise<boolean> {
    const upload = isUuid(uploadId) ? await this.em.findOne(ImportUpload, { id: uploadId }) : null;
    if (!upload) return false;
    await this.drop(upload);
    return true;
  }

  private async drop(upload: ImportUpload): Promise<void> {
    await dropUploadBytes(this.storage, [upload.storageKey]);
    await this.em.nativeDelete(ImportUpload, { id: upload.id });
  }

  /** First pass: UTF-8 text, CSV syntax, a header and at least one data row. Answers the header. */
  private async checkCsv(fileKey: string): Promise<string[]> {
    let header: string[] | null = null;
    let records = 0;
    const { maxRows, maxColumns, maxRecordBytes } = this.limits;
    try {
      for await (const record of await this.records(fileKey)) {
        if (!header) {
          header = (record as string[]).map((cell) => cell.trim());
          if (header.length > maxColumns)
            throw AppError.badInput(
              'file',
              `has ${header.length} columns; an import may have at most ${maxColumns} (IMPORT_MAX_COLUMNS)`,
            );
        }
        records++;
        if (records - 1 > maxRows) throw tooLarge(`has more than ${maxRows} data rows (IMPORT_MAX_ROWS)`);
      }
    } catch (error) {
      if (error instanceof NotText) throw AppError.badInput('file', 'is not a CSV file: it is not UTF-8 text');
      if (error instanceof CsvError && error.code === 'CSV_MAX_RECORD_SIZE') {
        throw tooLarge(`has a record longer than ${maxRecordBytes} characters (IMPORT_MAX_RECORD_BYTES)`);
      }
      if (error instanceof CsvError) throw AppError.badInput('file', `is not a CSV file: ${error.message}`);
      throw error;
    }
    if (!header) throw AppError.badInput('file', 'is empty');
    if (records === 1) throw AppError.badInput('file', 'has a header row but no data rows');
    if (header.every((cell) => !cell)) throw AppError.badInput('file', 'has an empty header row');
    return header;
  }

  private async writeRows(fileKey: string, header: string[], columns: MappedColumn[]): Promise<ImportResult> {
    const result = new ContactImportResult();
    let batch: ReadyRow[] = [];
    let row = 1;
    let first = true;
    for await (const record of await this.records(fileKey)) {
      if (first) {
        first = false;
        continue;
      }
      row++;
      result.rows++;
      const cells = record as string[];
      if (cells.length !== header.length) {
        result.skip(row, null, `has ${cells.length} cells; the header has ${header.length}`);
        continue;
      }
      const ready = await this.readRow(row, cells, columns, result);
      if (ready) batch.push(ready);
      if (batch.length >= IMPORT_BATCH_SIZE) {
        await this.writeBatch(batch, result);
        batch = [];
      }
    }
    if (batch.length) await this.writeBatch(batch, result);
    return result.toResult();
  }

  /** The row as contact fields, or null (and its errors noted) when it cannot be written. */
  private async readRow(
    row: number,
    cells: string[],
    columns: MappedColumn[],
    result: ContactImportResult,
  ): Promise<ReadyRow | null> {
    const values = new ContactInput();
    for (const { index, field } of columns) {
      const cell = cells[index].trim();
      if (!cell) continue;
      if (field === 'tags')
        values.tags = cell
          .split(/[;,]/)
          .map((tag) => tag.trim())
          .filter(Boolean);
      else values[field] = cell;
    }
    const columnOf = (field: string) => columns.find((column) => column.field === field)?.column ?? null;
    const problems = await validate(values, { forbidUnknownValues: false });
    if (problems.length) {
      for (const problem of problems) {
        for (const message of Object.values(problem.constraints ?? { invalid: 'is not valid' }))
          result.skip(row, columnOf(problem.property), message, false);
      }
      result.skipped++;
      return null;
    }
    if (!hasIdentity(values)) {
      result.skip(row, columnOf('firstName') ?? columnOf('email'), 'firstName or email is required');
      return null;
    }
    return { row, values };
  }

  /** Writes one batch in one transaction; e-mail matches (in the database or earlier in the file) update. */
  private async writeBatch(batch: ReadyRow[], result: ContactImportResult): Promise<void> {
    const firstRow = batch[0].row;
    const lastRow = batch.at(-1)!.row;
    let created = 0;
    let updated = 0;
    try {
      await this.em.fork().transactional(async (tx) => {
        const emails = [
          ...new Set(
            batch.map(({ values }) => values.email?.toLowerCase()).filter((email): email is string => Boolean(email)),
          ),
        ];
        const byEmail = new Map<string, Contact>();
        if (emails.length) {
          const matches = await tx.execute<{ id: string }[]>(
            `select id from "${this.schema}".contact where not deleted and lower(email) = any(array[?]::text[])`,
            [emails],
          );
          if (matches.length) {
            const found = await tx.find(Contact, { id: { $in: matches.map((match) => match.id) } });
            for (const contact of found) byEmail.set(contact.email!.toLowerCase(), contact);
          }
        }
        const fresh: Contact[] = [];
        for (const { values } of batch) {
          const key = values.email?.toLowerCase();
          const existing = key ? byEmail.get(key) : undefined;
          const contact = existing ?? new Contact();
          this.contacts.apply(contact, values);
          if (existing) {
            updated++;
          } else {
            created++;
            fresh.push(contact);
            if (key) byEmail.set(key, contact);
          }
        }
        // New contacts go in as one multi-row insert, past the unit of work (which would track a
        // thousand snapshots for nothing); matched ones are managed entities and flush as updates.
        if (fresh.length) {
          await tx.insertMany(
            Contact,
            fresh.map(({ id, firstName, lastName, email, phone, company, tags, deleted, createdAt, updatedAt }) => ({
              id,
              firstName,
              lastName,
              email,
              phone,
              company,
              tags,
              deleted,
              createdAt,
              updatedAt,
            })),
          );
        }
        await tx.flush();
      });
      result.created += created;
      result.updated += updated;
      result.batches.push({ firstRow, lastRow, created, updated, written: true });
    } catch (error) {
      // Another writer took one of these e-mail addresses meanwhile: this batch is rolled back,
      // reported, and the import goes on with the next one.
      if (!(error instanceof UniqueConstraintViolationException)) throw error;
      result.skipped += batch.length;
      result.skip(
        firstRow,
        null,
        `rows ${firstRow} to ${lastRow} were not written: an e-mail address was taken meanwhile; import them again`,
        false,
      );
      result.batches.push({ firstRow, lastRow, created: 0, updated: 0, written: false });
    }
  }

  private async records(fileKey: string): Promise<AsyncIterable<unknown>> {
    const { stream } = await this.storage.open(fileKey);
    const parser = parse({
      bom: true,
      skip_empty_lines: true,
      relax_column_count: true,
      max_record_size: this.limits.maxRecordBytes,
    });
    const text = stream.pipe(utf8Guard());
    stream.on('error', (error) => text.destroy(error));
    text.on('error', (error) => parser.destroy(error));
    // A read stopped early (a limit reached) closes the file too.
    parser.once('close', () => stream.destroy());
    return text.pipe(parser);
  }
}

/** Deletes the import files reserved and never imported, once their window closed: rows and bytes (every row is pending). */
export function sweepImportUploads(em: EntityManager, storage: ObjectStorage, now = new Date()): Promise<number> {
  return sweepReservations(em, storage, ImportUpload, {}, now);
}

class NotText extends Error {}

function tooLarge(message: string): AppError {
  return new AppError(ErrorCode.PAYLOAD_TOO_LARGE, `file: ${message}`, { fields: [{ field: 'file', message }] });
}

/** Passes bytes through, failing on NUL bytes or invalid UTF-8 (a binary file is not CSV). */
function utf8Guard(): Transform {
  const decoder = new TextDecoder('utf-8', { fatal: true });
  return new Transform({
    transform(chunk: Buffer, _encoding, callback) {
      try {
        if (chunk.includes(0)) throw new NotText();
        decoder.decode(chunk, { stream: true });
      } catch {
        return callback(new NotText());
      }
      callback(null, chunk);
    },
    flush(callback) {
      try {
        decoder.decode();
      } catch {
        return callback(new NotText());
      }
      callback();
    },
  });
}

/** The mapping as CSV column -> contact field; null targets ignore a column. */
function parseMapping(text: string | null | undefined): Map<string, ImportField | null> | null {
  if (text === null || text === undefined || !text.trim()) return null;
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    throw AppError.badInput('mapping', 'must be a JSON object from CSV column to contact field');
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) {
    throw AppError.badInput('mapping', 'must be a JSON object from CSV column to contact field');
  }
  const problems: FieldProblem[] = [];
  const mapping = new Map<string, ImportField | null>();
  for (const [column, target] of Object.entries(parsed)) {
    if (target === null || target === '') mapping.set(column.trim(), null);
    else if (typeof target === 'string' && (EDITABLE_FIELDS as readonly string[]).includes(target))
      mapping.set(column.trim(), target as ImportField);
    else
      problems.push({
        field: `mapping.${column}`,
        message: `${JSON.stringify(target)} is not a contact field; use one of ${EDITABLE_FIELDS.join(', ')}`,
      });
  }
  if (problems.length)
    throw new AppError(ErrorCode.BAD_USER_INPUT, 'The mapping names unknown contact fields', { fields: problems });
  return mapping;
}

function mapColumns(header: string[], mapping: Map<string, ImportField | null> | null): MappedColumn[] {
  const columns: MappedColumn[] = [];
  const problems: FieldProblem[] = [];
  if (mapping) {
    for (const [column, field] of mapping) {
      const index = header.indexOf(column);
      if (index < 0) problems.push({ field: `mapping.${column}`, message: 'is not a column of the file' });
      else if (field) columns.push({ index, column, field });
    }
  } else {
    header.forEach((column, index) => {
      const field = HEADER_ALIASES[normalizeHeader(column)];
      if (field) columns.push({ index, column, field });
    });
  }
  const seen = new Set<string>();
  for (const { field, column } of columns) {
    if (seen.has(field))
      problems.push({
        field: mapping ? `mapping.${column}` : 'file',
        message: `more than one column maps to ${field}`,
      });
    seen.add(field);
  }
  if (problems.length)
    throw new AppError(ErrorCode.BAD_USER_INPUT, 'The columns cannot be mapped to contact fields', {
      fields: problems,
    });
  if (!columns.length) {
    throw AppError.badInput(
      mapping ? 'mapping' : 'file',
      `no column maps to a contact field (${EDITABLE_FIELDS.join(', ')})`,
    );
  }
  return columns;
}

/** A refused upload commit as an import names it: bytes that are not UTF-8 text are not a CSV file. */
function inImportTerms(error: unknown): unknown {
  if (error instanceof AppError && error.fields[0]?.field === 'contentType')
    return AppError.badInput('file', 'is not a CSV file: it is not UTF-8 text');
  return error;
}
