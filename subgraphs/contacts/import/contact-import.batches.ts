import { readRow, type MappedColumn, type ReadyRow, type RowError } from './contact-import.csv.js';

/**
 * Valid rows written per transaction. The legacy answer lists its batches of 1,000 rows; the bench
 * measured 1,000 within a few per cent of 5,000 (a batch is one upsert statement either way).
 */
export const IMPORT_BATCH_ROWS = 1000;

/** Where a run of the import starts reading, and how it maps the file's columns. */
export interface BatchPlan {
  columns: MappedColumn[];
  /** The first file row not yet written (2 at the start: row 1 is the header). */
  nextRow: number;
}

/**
 * Rows of the file ready to write in one transaction: plain data (it crosses from the import's
 * thread to the job, `contact-import.thread.ts`), the rows already as the upsert's JSON parameter.
 */
export interface ImportBatch {
  /** The valid rows, e-mail duplicates merged into their first row, as the upsert reads them (JSON). */
  rowsJson: string;
  /** How many rows `rowsJson` holds. */
  rowCount: number;
  /** Their e-mail addresses in lower case (a dry run looks them up). */
  emailKeys: string[];
  /** Rows of the batch merged into an earlier row of it by e-mail: each one updates that contact. */
  merged: number;
  errors: RowError[];
  /** Invalid rows (skipped). */
  invalid: number;
  /** The first and last valid rows (what the legacy answer lists of a batch). */
  firstValid: number;
  lastValid: number;
  /** The last file row the batch accounts for (valid or not). */
  lastRow: number;
}

/**
 * The file's records (header first) as batches of IMPORT_BATCH_ROWS valid rows, from `plan.nextRow`
 * on: rows before it were written by an earlier run of the job.
 */
export async function* batchesOf(records: AsyncIterable<string[]>, plan: BatchPlan): AsyncGenerator<ImportBatch> {
  let header: string[] | null = null;
  let row = 1;
  let batch = new BatchUnderWay();
  for await (const cells of records) {
    if (!header) {
      header = cells;
      continue;
    }
    row++;
    if (row < plan.nextRow) continue;
    batch.add(row, readRow(row, cells, header, plan.columns));
    if (batch.full()) {
      yield batch.ready();
      batch = new BatchUnderWay();
    }
  }
  if (batch.lastRow) yield batch.ready();
}

class BatchUnderWay {
  private readonly rows: ReadyRow[] = [];
  private readonly byEmail = new Map<string, ReadyRow>();
  private merged = 0;
  private readonly errors: RowError[] = [];
  private invalid = 0;
  private firstValid = 0;
  private lastValid = 0;
  lastRow = 0;

  add(row: number, read: ReadyRow | RowError[]): void {
    this.lastRow = row;
    if (Array.isArray(read)) {
      this.errors.push(...read);
      this.invalid++;
      return;
    }
    this.firstValid ||= row;
    this.lastValid = row;
    const key = read.values.email?.toLowerCase();
    const earlier = key ? this.byEmail.get(key) : undefined;
    if (earlier) {
      mergeInto(earlier, read);
      this.merged++;
    } else {
      if (key) this.byEmail.set(key, read);
      this.rows.push(read);
    }
  }

  full(): boolean {
    return this.rows.length + this.merged >= IMPORT_BATCH_ROWS;
  }

  ready(): ImportBatch {
    return {
      rowsJson: JSON.stringify(this.rows.map(asInputRow)),
      rowCount: this.rows.length,
      emailKeys: [...this.byEmail.keys()],
      merged: this.merged,
      errors: this.errors,
      invalid: this.invalid,
      firstValid: this.firstValid,
      lastValid: this.lastValid,
      lastRow: this.lastRow,
    };
  }
}

/** A later row of the file with the same e-mail: its filled cells replace the earlier row's. */
function mergeInto(earlier: ReadyRow, later: ReadyRow): void {
  for (const [field, value] of Object.entries(later.values)) {
    if (value !== undefined) (earlier.values as Record<string, unknown>)[field] = value;
  }
}

/** A row as the upsert reads it: absent fields as null (left as they are), tags trimmed and unique. */
function asInputRow({ values }: ReadyRow) {
  return {
    first_name: values.firstName ?? null,
    last_name: values.lastName ?? null,
    email: values.email ?? null,
    email_key: values.email?.toLowerCase() ?? null,
    phone: values.phone ?? null,
    company: values.company ?? null,
    tags: values.tags ? [...new Set(values.tags.map((tag) => tag.trim()).filter(Boolean))] : null,
  };
}
