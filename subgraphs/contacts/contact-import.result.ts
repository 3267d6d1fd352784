import type { ImportBatch, ImportResult, ImportRowError } from './contact-import.types.js';

const MAX_LISTED_ERRORS = 1000;

/** Counts of an import under way; the error list is bounded so that a bad 100k-row file stays small. */
export class ContactImportResult {
  rows = 0;
  created = 0;
  updated = 0;
  skipped = 0;
  readonly errors: ImportRowError[] = [];
  errorsTruncated = false;
  readonly batches: ImportBatch[] = [];

  /** Notes a row error; `countRow` false when the row was (or will be) counted already. */
  skip(row: number, column: string | null, message: string, countRow = true): void {
    if (countRow) this.skipped++;
    if (this.errors.length < MAX_LISTED_ERRORS) this.errors.push({ row, column, message });
    else this.errorsTruncated = true;
  }

  toResult(): ImportResult {
    const { rows, created, updated, skipped, errors, errorsTruncated, batches } = this;
    return { rows, created, updated, skipped, errors, errorsTruncated, batches };
  }
}
