import 'reflect-metadata';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { parse } from 'csv-parse/sync';
import { graphql, rest, startTestPlatform, type TestPlatform } from '#test/support/platform.js';

/** POST /api/contacts/import as a client sends it, with `query` (e.g. `?dryRun=true`) and extra headers. */
async function postImport(
  base: string,
  csv: string,
  options: { query?: string; headers?: Record<string, string>; mapping?: Record<string, string> } = {},
) {
  const form = new FormData();
  if (options.mapping) form.append('mapping', JSON.stringify(options.mapping));
  form.append('file', new Blob([csv], { type: 'text/csv' }), 'contacts.csv');
  const response = await fetch(`${base}/api/contacts/import${options.query ?? ''}`, {
    method: 'POST',
    body: form,
    headers: options.headers,
  });
  return { status: response.status, headers: response.headers, body: (await response.json()) as any };
}

const ASYNC = { prefer: 'respond-async' };

function rowsOf(count: number, domain: string, from = 1): string {
  const lines = ['firstName,lastName,email,company'];
  for (let n = from; n < from + count; n++) lines.push(`Row${n},Person,row${n}@${domain},Company ${n % 97}`);
  return lines.join('\n');
}

describe('contacts: imports as background jobs', () => {
  let platform: TestPlatform;
  let base: string;

  beforeAll(async () => {
    platform = await startTestPlatform();
    base = platform.urls.contactsRest;
  });
  afterAll(async () => {
    await platform?.stop();
  });

  const total = async (search: string) =>
    (await rest('GET', `${base}/api/contacts?search=${encodeURIComponent(search)}`)).body.total as number;

  async function settled(location: string, timeoutMs = 60_000) {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const job = await rest('GET', `${base}${location}`);
      expect(job.status).toBe(200);
      if (!['queued', 'running'].includes(job.body.status)) return job;
      if (Date.now() > deadline) throw new Error(`import still ${job.body.status}: ${JSON.stringify(job.body)}`);
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  }

  it('answers 202 with Prefer: respond-async, and the job at Location ends with the same counts as a waiting import', async () => {
    const csv = [
      rowsOf(1500, 'async.example'),
      'Broken,Row,not-an-email,X',
      'Row7,Again,ROW7@async.example,Merged Co',
      ',,,',
      'Short',
    ].join('\n');
    const started = await postImport(base, csv, { headers: ASYNC });
    expect(started.status).toBe(202);
    expect(started.headers.get('preference-applied')).toBe('respond-async');
    const location = started.headers.get('location')!;
    expect(location).toBe(`/api/contacts/import/${started.body.id}`);
    expect(started.body).toMatchObject({
      id: expect.any(String),
      dryRun: false,
      errors: 0,
      createdAt: expect.any(String),
    });
    expect(['queued', 'running', 'succeeded']).toContain(started.body.status);

    const done = await settled(location);
    expect(done.body).toMatchObject({
      status: 'succeeded',
      rows: 1504,
      processed: 1504,
      created: 1500,
      updated: 1,
      skipped: 3,
      errors: 3,
      failure: null,
      startedAt: expect.any(String),
      finishedAt: expect.any(String),
    });
    expect(await total('async.example')).toBe(1500);
    const merged = (await rest('GET', `${base}/api/contacts?search=Merged`)).body;
    expect(merged.total).toBe(1);
    expect(merged.data[0]).toMatchObject({ email: 'ROW7@async.example', firstName: 'Row7', lastName: 'Again' });

    // One resource, no version of its own: a strong ETag of its bytes, and 304 while they stay the same.
    const etag = done.headers.get('etag')!;
    expect(etag).toMatch(/^"[\w-]{27}"$/);
    const unchanged = await fetch(`${base}${location}`, { headers: { 'if-none-match': etag } });
    expect(unchanged.status).toBe(304);

    const errors = await fetch(`${base}${location}/errors.csv`);
    expect(errors.status).toBe(200);
    expect(errors.headers.get('content-type')).toContain('text/csv');
    expect(parse(await errors.text())).toEqual([
      ['row', 'column', 'message'],
      ['1502', 'email', 'must be a valid e-mail address'],
      ['1504', 'firstName', 'firstName or email is required'],
      ['1505', '', 'has 1 cells; the header has 4'],
    ]);
  });

  it('lists every rejected row in errors.csv, past the 1,000 the waiting answer lists', async () => {
    const lines = ['firstName,email'];
    for (let n = 1; n <= 2300; n++) lines.push(`Bad${n},bad-${n}`);
    lines.push('Good,good@errors.example');
    const waited = await postImport(base, lines.join('\n'));
    expect(waited.status).toBe(200);
    expect(waited.body).toMatchObject({ rows: 2301, created: 1, skipped: 2300, errorsTruncated: true });
    expect(waited.body.errors).toHaveLength(1000);

    const started = await postImport(base, lines.join('\n'), { headers: ASYNC });
    const location = started.headers.get('location')!;
    expect((await settled(location)).body).toMatchObject({ status: 'succeeded', errors: 2300, updated: 1 });
    const rows: string[][] = parse(await (await fetch(`${base}${location}/errors.csv`)).text());
    expect(rows).toHaveLength(2301);
    expect(rows.slice(1).map(([row]) => Number(row))).toEqual(Array.from({ length: 2300 }, (_, index) => index + 2));
  });

  it('neutralises in errors.csv a cell a spreadsheet would run as a formula, as the export does', async () => {
    const column = '=HYPERLINK("http://evil.example","Click")';
    const csv = [`"${column.replace(/"/g, '""')}",Name`, 'not-an-email,Eve', '@SUM(1),Mallory'].join('\n');
    const started = await postImport(base, csv, { headers: ASYNC, mapping: { [column]: 'email', Name: 'firstName' } });
    expect(started.status).toBe(202);
    const location = started.headers.get('location')!;
    expect((await settled(location)).body).toMatchObject({ status: 'succeeded', errors: 2 });
    const rows: string[][] = parse(await (await fetch(`${base}${location}/errors.csv`)).text());
    expect(rows).toEqual([
      ['row', 'column', 'message'],
      ['2', `'${column}`, 'must be a valid e-mail address'],
      ['3', `'${column}`, 'must be a valid e-mail address'],
    ]);
  });

  it('checks every row on ?dryRun=true and answers what would happen, writing nothing', async () => {
    await postImport(base, rowsOf(10, 'dry.example'));
    const csv = [rowsOf(20, 'dry.example', 6), 'Row8,Twice,row8@dry.example,', 'Bad,Row,nope,'].join('\n');
    const dry = await postImport(base, csv, { query: '?dryRun=true' });
    expect(dry.status).toBe(200);
    // Rows 6 to 10 exist; row 8 comes twice; 11 to 25 would be new.
    expect(dry.body).toMatchObject({ rows: 22, created: 15, updated: 6, skipped: 1, batches: [] });
    expect(dry.body.errors).toEqual([{ row: 23, column: 'email', message: 'must be a valid e-mail address' }]);
    expect(await total('dry.example')).toBe(10);
    expect((await rest('GET', `${base}/api/contacts?search=row8@dry.example`)).body.data[0].lastName).toBe('Person');

    const background = await postImport(base, csv, { query: '?dryRun=true', headers: ASYNC });
    expect(background.body.dryRun).toBe(true);
    const done = await settled(background.headers.get('location')!);
    expect(done.body).toMatchObject({ status: 'succeeded', dryRun: true, created: 15, updated: 6, skipped: 1 });
    expect(await total('dry.example')).toBe(10);

    const bad = await postImport(base, csv, { query: '?dryRun=maybe' });
    expect(bad.status).toBe(400);
    expect(bad.body.errors[0].field).toBe('dryRun');
  });

  it('cancels a running import on DELETE: the batches written stay, nothing more is written', async () => {
    const rows = 60_000;
    const started = await postImport(base, rowsOf(rows, 'cancel.example'), { headers: ASYNC });
    const location = started.headers.get('location')!;
    for (;;) {
      const job = (await rest('GET', `${base}${location}`)).body;
      if (job.processed >= 2000) break;
      expect(job.status).not.toBe('succeeded');
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
    const cancelled = await rest('DELETE', `${base}${location}`);
    expect(cancelled.status).toBe(200);
    expect(cancelled.body).toMatchObject({ status: 'cancelled', finishedAt: expect.any(String) });
    await new Promise((resolve) => setTimeout(resolve, 1000));
    const after = (await rest('GET', `${base}${location}`)).body;
    expect(after.status).toBe('cancelled');
    expect(after.processed).toBeLessThan(rows);
    expect(after.processed % 1000).toBe(0);
    const exported = parse(await (await fetch(`${base}/api/contacts/export?search=cancel.example`)).text());
    expect(exported.length - 1).toBe(after.created);
    // An import that is over is answered as it is.
    expect((await rest('DELETE', `${base}${location}`)).body).toMatchObject({ status: 'cancelled' });
  });

  it('fails an import of a broken file with its reason, writing nothing; the waiting request answers the problem', async () => {
    const started = await postImport(base, 'firstName,email\n"Ann,ann@x.example\nBob,"b"ob@x.example\n', {
      headers: ASYNC,
    });
    expect(started.status).toBe(202);
    const done = await settled(started.headers.get('location')!);
    expect(done.body).toMatchObject({
      status: 'failed',
      failure: expect.stringContaining('not a CSV file'),
      created: 0,
    });
  });

  it('answers 404 for an import that does not exist', async () => {
    for (const path of [
      '/api/contacts/import/00000000-0000-4000-8000-000000000000',
      '/api/contacts/import/not-an-id',
      '/api/contacts/import/00000000-0000-4000-8000-000000000000/errors.csv',
    ]) {
      const answer = await rest('GET', `${base}${path}`);
      expect([path, answer.status]).toEqual([path, 404]);
      expect(answer.headers.get('content-type')).toContain('application/problem+json');
    }
    expect((await rest('DELETE', `${base}/api/contacts/import/00000000-0000-4000-8000-000000000000`)).status).toBe(404);
  });

  it('follows the same job in GraphQL: contactImport(id), its row errors as a connection', async () => {
    const started = await postImport(base, `${rowsOf(3, 'graph.example')}\nBad,Row,nope,\n`, { headers: ASYNC });
    await settled(started.headers.get('location')!);
    const answer = await graphql<any>(
      platform.urls.gateway,
      `
        query ($id: ID!) {
          contactImport(id: $id) {
            id
            status
            dryRun
            rows
            processed
            created
            updated
            skipped
            errorCount
            failure
            errors(first: 10) {
              nodes {
                row
                column
                message
              }
              pageInfo {
                hasNextPage
                endCursor
              }
            }
          }
        }
      `,
      { id: started.body.id },
    );
    expect(answer.body.errors).toBeUndefined();
    expect(answer.body.data.contactImport).toMatchObject({
      id: started.body.id,
      status: 'SUCCEEDED',
      rows: 4,
      created: 3,
      errorCount: 1,
      errors: { nodes: [{ row: 5, column: 'email', message: 'must be a valid e-mail address' }] },
    });
    const unknown = await graphql<any>(platform.urls.gateway, '{ contactImport(id: "nope") { id } }');
    expect(unknown.body.data.contactImport).toBeNull();
  });
});
