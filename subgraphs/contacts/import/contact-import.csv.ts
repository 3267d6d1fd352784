import { Transform, type Readable } from 'node:stream';
import { CsvError, parse } from 'csv-parse';
import { validateSync } from 'class-validator';
import { AppError, ErrorCode, type FieldProblem } from '#lib/errors.js';
import type { ObjectStorage } from '#lib/storage/storage.js';
// Only the input's module (not the entity's or the service's): the import's thread loads this file,
// and the ORM would add some 13 MB to it for nothing.
import { ContactInput, EDITABLE_FIELDS, hasIdentity } from '../contact/contact.input.js';

export type ImportField = (typeof EDITABLE_FIELDS)[number];

/** CSV column -> contact field; a null field ignores the column. */
export type ImportMapping = Map<string, ImportField | null>;

/** How much one CSV import may hold (`IMPORT_MAX_BYTES`, `IMPORT_MAX_ROWS`, `IMPORT_MAX_COLUMNS`, `IMPORT_MAX_RECORD_BYTES`). */
export interface ImportLimits {
  maxBytes: number;
  maxRows: number;
  maxColumns: number;
  /** Characters one record (one field or line being read) may reach; csv-parse would otherwise buffer a whole file as one field. */
  maxRecordBytes: number;
}

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

const normalizeHeader = (header: string) => header.toLowerCase().replace(/[^a-z0-9]/g, '');

export interface MappedColumn {
  index: number;
  column: string;
  field: ImportField;
}

export interface RowError {
  row: number;
  column: string | null;
  message: string;
}

/** A data row as contact fields: undefined ones stay as they are on a contact it updates. */
export interface ReadyRow {
  row: number;
  values: ContactInput;
}

/**
 * The data rows of a stored CSV file as a stream of records: UTF-8 text only, records bounded by
 * `maxRecordBytes`; ending the iteration early closes the file.
 */
export async function csvRecords(
  storage: ObjectStorage,
  key: string,
  limits: ImportLimits,
): Promise<AsyncIterable<string[]>> {
  const { stream } = await storage.open(key);
  return recordsOf(stream, limits);
}

/** The records of CSV bytes (a stored file, or the bytes handed to the import's thread), read as `csvRecords` says. */
export function recordsOf(bytes: Readable, limits: ImportLimits): AsyncIterable<string[]> {
  const parser = parse({
    bom: true,
    skip_empty_lines: true,
    relax_column_count: true,
    max_record_size: limits.maxRecordBytes,
  });
  const text = bytes.pipe(utf8Guard());
  bytes.on('error', (error) => text.destroy(error));
  text.on('error', (error) => parser.destroy(error));
  // A read stopped early (a limit reached) closes the file too.
  parser.once('close', () => bytes.destroy());
  return text.pipe(parser) as AsyncIterable<string[]>;
}

/**
 * The first read of a file, before anything is written: UTF-8 text, CSV syntax, a header, at least one
 * data row, the limits. Answers the header and the number of data rows; a file that fails writes nothing.
 */
export async function checkCsv(
  file: AsyncIterable<string[]>,
  limits: ImportLimits,
): Promise<{ header: string[]; rows: number }> {
  let header: string[] | null = null;
  let records = 0;
  const { maxRows, maxColumns, maxRecordBytes } = limits;
  try {
    for await (const record of file) {
      if (!header) {
        header = record.map((cell) => cell.trim());
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
    throw inFileTerms(error, maxRecordBytes);
  }
  if (!header) throw AppError.badInput('file', 'is empty');
  if (records === 1) throw AppError.badInput('file', 'has a header row but no data rows');
  if (header.every((cell) => !cell)) throw AppError.badInput('file', 'has an empty header row');
  return { header, rows: records - 1 };
}

/** A read failure of the file as the caller's problem with the file, or the error itself when it is not one. */
export function inFileTerms(error: unknown, maxRecordBytes: number): unknown {
  if (error instanceof NotText) return AppError.badInput('file', 'is not a CSV file: it is not UTF-8 text');
  if (error instanceof CsvError && error.code === 'CSV_MAX_RECORD_SIZE') {
    return tooLarge(`has a record longer than ${maxRecordBytes} characters (IMPORT_MAX_RECORD_BYTES)`);
  }
  if (error instanceof CsvError) return AppError.badInput('file', `is not a CSV file: ${error.message}`);
  return error;
}

/**
 * The row as contact fields, or the reasons it cannot be written. The API's own rules (ContactInput's),
 * checked synchronously: a million rows through `validate`'s promises cost a third more.
 */
export function readRow(
  row: number,
  cells: string[],
  header: string[],
  columns: MappedColumn[],
): ReadyRow | RowError[] {
  if (cells.length !== header.length)
    return [{ row, column: null, message: `has ${cells.length} cells; the header has ${header.length}` }];
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
  const problems = validateSync(values, { forbidUnknownValues: false });
  if (problems.length) {
    return problems.flatMap((problem) =>
      Object.values(problem.constraints ?? { invalid: 'is not valid' }).map((message) => ({
        row,
        column: columnOf(problem.property),
        message,
      })),
    );
  }
  if (!hasIdentity(values))
    return [{ row, column: columnOf('firstName') ?? columnOf('email'), message: 'firstName or email is required' }];
  return { row, values };
}

class NotText extends Error {}

export function tooLarge(message: string): AppError {
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

/**
 * The mapping as CSV column -> contact field (null targets ignore a column), from the object GraphQL
 * (a JSONObject) or a stored job brings; null when none was given. JSON text is a REST body's form,
 * which its adapter parses: here it is no mapping.
 */
export function parseMapping(given: unknown): ImportMapping | null {
  if (given === null || given === undefined) return null;
  if (typeof given !== 'object' || Array.isArray(given)) {
    throw AppError.badInput('mapping', 'must be a JSON object from CSV column to contact field');
  }
  const problems: FieldProblem[] = [];
  const mapping: ImportMapping = new Map();
  for (const [column, target] of Object.entries(given)) {
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

export function mapColumns(header: string[], mapping: ImportMapping | null): MappedColumn[] {
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
