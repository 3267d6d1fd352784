import 'reflect-metadata';
import { describe, expect, it } from '@jest/globals';
import { batchesOf, IMPORT_BATCH_ROWS, type ImportBatch } from '#subgraphs/contacts/import/contact-import.batches.js';
import { mapColumns } from '#subgraphs/contacts/import/contact-import.csv.js';

const header = ['First Name', 'Email', 'Tags'];
const columns = mapColumns(header, null);

async function* recordsOf(rows: string[][]): AsyncGenerator<string[]> {
  yield header;
  yield* rows;
}

async function batches(rows: string[][], nextRow = 2): Promise<ImportBatch[]> {
  const all: ImportBatch[] = [];
  for await (const batch of batchesOf(recordsOf(rows), { columns, nextRow })) all.push(batch);
  return all;
}

describe('batchesOf (what the import thread hands the job)', () => {
  it('merges a later row with the same e-mail into the first, counts invalid rows and keeps file rows', async () => {
    const [batch, ...more] = await batches([
      ['Ada', 'ada@example.com', 'vip'],
      ['', 'not-an-address', ''],
      ['', 'ADA@example.com', ' lead ; vip '],
      ['Bo', '', ''],
    ]);
    expect(more).toEqual([]);
    expect(JSON.parse(batch.rowsJson)).toEqual([
      {
        first_name: 'Ada',
        last_name: null,
        email: 'ADA@example.com',
        email_key: 'ada@example.com',
        phone: null,
        company: null,
        tags: ['lead', 'vip'],
      },
      { first_name: 'Bo', last_name: null, email: null, email_key: null, phone: null, company: null, tags: null },
    ]);
    expect({ ...batch, rowsJson: undefined, errors: batch.errors.map((error) => error.row) }).toEqual({
      rowsJson: undefined,
      rowCount: 2,
      emailKeys: ['ada@example.com'],
      merged: 1,
      errors: [3],
      invalid: 1,
      firstValid: 2,
      lastValid: 5,
      lastRow: 5,
    });
  });

  it('cuts batches at IMPORT_BATCH_ROWS valid rows and starts where an earlier run stopped', async () => {
    const rows = Array.from({ length: IMPORT_BATCH_ROWS + 10 }, (_, i) => [`P${i}`, `p${i}@example.com`, '']);
    expect((await batches(rows)).map((batch) => [batch.rowCount, batch.firstValid, batch.lastRow])).toEqual([
      [IMPORT_BATCH_ROWS, 2, IMPORT_BATCH_ROWS + 1],
      [10, IMPORT_BATCH_ROWS + 2, IMPORT_BATCH_ROWS + 11],
    ]);
    // A job resumed at the second batch reads only its rows.
    expect(
      (await batches(rows, IMPORT_BATCH_ROWS + 2)).map((batch) => [batch.rowCount, batch.firstValid, batch.lastRow]),
    ).toEqual([[10, IMPORT_BATCH_ROWS + 2, IMPORT_BATCH_ROWS + 11]]);
  });
});
