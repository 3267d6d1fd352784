import 'reflect-metadata';
import { Readable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { parse } from 'csv-parse/sync';
import { createStorage } from '#lib/storage/create-storage.js';
import { graphql, rest, startTestPlatform, type TestPlatform } from '#test/support/platform.js';

async function importCsv(base: string, csv: string | Buffer, mapping?: unknown, filename = 'contacts.csv') {
  const form = new FormData();
  if (mapping !== undefined) form.append('mapping', typeof mapping === 'string' ? mapping : JSON.stringify(mapping));
  form.append('file', new Blob([csv], { type: 'text/csv' }), filename);
  const response = await fetch(`${base}/api/contacts/import`, { method: 'POST', body: form });
  return { status: response.status, headers: response.headers, body: (await response.json()) as any };
}

async function exportCsv(base: string, query = '') {
  const response = await fetch(`${base}/api/contacts/export${query}`);
  const text = await response.text();
  const rows: string[][] = parse(text, { bom: true });
  return { status: response.status, headers: response.headers, text, rows };
}

describe('contacts: CSV import and export, list statement counts', () => {
  let platform: TestPlatform;
  let base: string;
  let statements: string[] = [];

  beforeAll(async () => {
    platform = await startTestPlatform(
      {},
      { onQuery: (service, sql) => service === 'contacts' && statements.push(sql) },
    );
    base = platform.urls.contactsRest;
  });
  afterAll(async () => {
    await platform?.stop();
  });

  const total = async (search?: string) =>
    (await rest('GET', `${base}/api/contacts${search ? `?search=${encodeURIComponent(search)}` : ''}`)).body
      .total as number;

  describe('import', () => {
    it('imports a valid file, matching columns by header name', async () => {
      const csv = [
        'First Name,Last Name,E-mail,Phone,Company,Tags,Shoe size',
        'Ada,Lovelace,ada@import.example,+44 1,Analytical,"math;vip",38',
        'Grace,Hopper,grace@import.example,,US Navy,cobol,40',
        '"Jean ""JJ""",Bartik,jean@import.example,,"Eckert, Mauchly",,41',
      ].join('\r\n');
      const res = await importCsv(base, csv);
      expect(res.status).toBe(200);
      expect(res.body).toMatchObject({ rows: 3, created: 3, updated: 0, skipped: 0, errors: [] });
      expect(res.body.batches).toEqual([{ firstRow: 2, lastRow: 4, created: 3, updated: 0, written: true }]);
      const ada = (await rest('GET', `${base}/api/contacts?search=ada@import.example`)).body.data[0];
      expect(ada).toMatchObject({
        firstName: 'Ada',
        lastName: 'Lovelace',
        phone: '+44 1',
        company: 'Analytical',
        tags: ['math', 'vip'],
      });
      const jean = (await rest('GET', `${base}/api/contacts?search=jean@import.example`)).body.data[0];
      expect(jean).toMatchObject({ firstName: 'Jean "JJ"', company: 'Eckert, Mauchly' });
    });

    it('uses a mapping, sent before or after the file', async () => {
      const csv = 'Vorname;x,Mail,Firma,Notiz\nKurt,kurt@map.example,Gödel AG,ignored\n';
      const res = await importCsv(base, csv, {
        'Vorname;x': 'firstName',
        Mail: 'email',
        Firma: 'company',
        Notiz: null,
      });
      expect(res.status).toBe(200);
      expect(res.body).toMatchObject({ created: 1, skipped: 0 });
      const kurt = (await rest('GET', `${base}/api/contacts?search=kurt@map.example`)).body.data[0];
      expect(kurt).toMatchObject({ firstName: 'Kurt', company: 'Gödel AG' });

      // Mapping after the file part: the file is already stored when the mapping arrives.
      const form = new FormData();
      form.append('file', new Blob(['Who,Address\nEmmy,emmy@map.example\n'], { type: 'text/csv' }), 'late.csv');
      form.append('mapping', JSON.stringify({ Who: 'firstName', Address: 'email' }));
      const late = await fetch(`${base}/api/contacts/import`, { method: 'POST', body: form });
      expect(late.status).toBe(200);
      expect(await late.json()).toMatchObject({ created: 1 });
    });

    it('takes the mapping of importContacts in GraphQL as a JSONObject of column -> field, as startContactImport does', async () => {
      const storage = createStorage(platform.config);
      const uploaded = async (csv: string) => {
        const reserved = await graphql<{ reserveContactImport: { uploadId: string; storageKey: string } }>(
          platform.urls.gateway,
          'mutation { reserveContactImport { uploadId storageKey } }',
        );
        const slot = reserved.body.data!.reserveContactImport;
        await storage.put(slot.storageKey, Readable.from([Buffer.from(csv)]), {
          contentType: 'text/csv',
          maxBytes: 1 << 20,
        });
        return slot.uploadId;
      };
      const IMPORT = `mutation ($id: ID!, $mapping: JSONObject) {
        importContacts(uploadId: $id, mapping: $mapping) { rows created }
      }`;
      const csv = 'Who,Address\nAlan,alan@graph-map.example\n';
      const imported = await graphql(platform.urls.gateway, IMPORT, {
        id: await uploaded(csv),
        mapping: { Who: 'firstName', Address: 'email' },
      });
      expect(imported.body.errors).toBeUndefined();
      expect(imported.body.data).toEqual({ importContacts: { rows: 1, created: 1 } });
      expect(await total('alan@graph-map.example')).toBe(1);

      const unknownField = await graphql(platform.urls.gateway, IMPORT, {
        id: await uploaded(csv),
        mapping: { Who: 'shoeSize', Address: 'email' },
      });
      expect(unknownField.body.errors?.[0].extensions).toMatchObject({
        code: 'BAD_USER_INPUT',
        errors: [{ field: 'mapping.Who' }],
      });
      // JSON in a string is no longer a mapping: GraphQL's own validation refuses it.
      const text = await graphql(platform.urls.gateway, IMPORT, {
        id: await uploaded(csv),
        mapping: JSON.stringify({ Who: 'firstName', Address: 'email' }),
      });
      expect(text.body.errors?.[0].extensions?.code).toBe('BAD_USER_INPUT');
      expect(await total('alan@graph-map.example')).toBe(1);
    });

    it('skips and reports rows with errors, and writes the others', async () => {
      const before = await total();
      const csv = [
        'firstName,email,tags',
        'Valid,valid@rows.example,',
        'Broken,not-an-email,',
        ',,lonely',
        'Short',
        'Also valid,also@rows.example,a;b',
      ].join('\n');
      const res = await importCsv(base, csv);
      expect(res.status).toBe(200);
      expect(res.body).toMatchObject({ rows: 5, created: 2, updated: 0, skipped: 3 });
      expect(res.body.errors).toEqual([
        { row: 3, column: 'email', message: 'must be a valid e-mail address' },
        { row: 4, column: 'firstName', message: 'firstName or email is required' },
        { row: 5, column: null, message: 'has 1 cells; the header has 3' },
      ]);
      expect(await total()).toBe(before + 2);
      expect(await total('not-an-email')).toBe(0);
    });

    it('updates a contact whose e-mail matches instead of creating a duplicate', async () => {
      const existing = await rest('POST', `${base}/api/contacts`, {
        firstName: 'Old',
        lastName: 'Name',
        email: 'Match@Dup.example',
        phone: '123',
      });
      expect(existing.status).toBe(201);
      const before = await total();
      const csv =
        'email,firstName,company\nmatch@dup.example,New,Acme\nfresh@dup.example,Fresh,\nFRESH@dup.example,,Fresh Co\n';
      const res = await importCsv(base, csv);
      expect(res.status).toBe(200);
      expect(res.body).toMatchObject({ created: 1, updated: 2, skipped: 0 });
      expect(await total()).toBe(before + 1);
      const updated = (await rest('GET', `${base}/api/contacts/${existing.body.id}`)).body;
      // Blank cells leave fields as they were; filled ones replace them.
      expect(updated).toMatchObject({ firstName: 'New', lastName: 'Name', company: 'Acme', phone: '123' });
      const fresh = (await rest('GET', `${base}/api/contacts?search=fresh@dup.example`)).body;
      expect(fresh.total).toBe(1);
      expect(fresh.data[0]).toMatchObject({ firstName: 'Fresh', company: 'Fresh Co' });
    });

    it('answers bad input with 400 problems and writes nothing', async () => {
      const before = await total();
      const cases: Array<[string, string | Buffer, unknown, string]> = [
        [
          'not CSV (binary)',
          Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0, 0, 0, 0x0d]),
          undefined,
          'file',
        ],
        ['not CSV (broken quotes)', 'firstName,email\n"Ann,ann@x.example\nBob,"b"ob@x.example\n', undefined, 'file'],
        [
          'unknown target field',
          'firstName,email\nAnn,ann@bad.example\n',
          { firstName: 'firstName', email: 'shoeSize' },
          'mapping.email',
        ],
        [
          'mapping of a missing column',
          'firstName,email\nAnn,ann@bad.example\n',
          { Name: 'firstName' },
          'mapping.Name',
        ],
        ['mapping not JSON', 'firstName,email\nAnn,ann@bad.example\n', '{nope', 'mapping'],
        ['empty file', '', undefined, 'file'],
        ['header only', 'firstName,email\r\n', undefined, 'file'],
        ['no known column', 'foo,bar\n1,2\n', undefined, 'file'],
      ];
      for (const [label, csv, mapping, field] of cases) {
        const res = await importCsv(base, csv, mapping);
        expect([label, res.status]).toEqual([label, 400]);
        expect(res.headers.get('content-type')).toContain('application/problem+json');
        expect([label, res.body.errors.map((error: { field: string }) => error.field)]).toEqual([
          label,
          expect.arrayContaining([field]),
        ]);
        expect(JSON.stringify(res.body)).not.toMatch(/imports\/|\.ts:\d+/);
      }
      const noFile = await fetch(`${base}/api/contacts/import`, { method: 'POST', body: new FormData() });
      expect(noFile.status).toBe(400);
      const notMultipart = await rest('POST', `${base}/api/contacts/import`, 'firstName\nAnn', {
        'content-type': 'text/csv',
      });
      expect(notMultipart.status).toBe(400);
      expect(await total()).toBe(before);
    });

    it('imports in batches: 2,500 rows in three all-or-nothing batches', async () => {
      const lines = ['firstName,email'];
      for (let i = 1; i <= 2500; i++) lines.push(`Batch${i},batch${i}@many.example`);
      const res = await importCsv(base, lines.join('\n'));
      expect(res.status).toBe(200);
      expect(res.body).toMatchObject({ rows: 2500, created: 2500, skipped: 0 });
      expect(res.body.batches).toEqual([
        { firstRow: 2, lastRow: 1001, created: 1000, updated: 0, written: true },
        { firstRow: 1002, lastRow: 2001, created: 1000, updated: 0, written: true },
        { firstRow: 2002, lastRow: 2501, created: 500, updated: 0, written: true },
      ]);
      expect(await total('many.example')).toBe(2500);
    });
  });

  describe('export', () => {
    it('streams every live contact with a header, RFC 4180 quoting and neutralised formulas', async () => {
      const tricky = await rest('POST', `${base}/api/contacts`, {
        firstName: '=HYPERLINK("http://evil.example")',
        lastName: 'Comma, "Quote"\nNewline',
        company: '@SUM(A1:A2)',
        phone: '+1 555 0100',
        email: 'tricky@export.example',
        tags: ['-2+3', 'plain'],
      });
      expect(tricky.status).toBe(201);
      const deleted = await rest('POST', `${base}/api/contacts`, { firstName: 'Gone', email: 'gone@export.example' });
      await rest('DELETE', `${base}/api/contacts/${deleted.body.id}`);

      const res = await exportCsv(base);
      expect(res.status).toBe(200);
      expect(res.headers.get('content-type')).toBe('text/csv; charset=utf-8');
      expect(res.headers.get('content-disposition')).toContain('attachment; filename="contacts.csv"');
      expect(res.rows[0]).toEqual([
        'id',
        'firstName',
        'lastName',
        'email',
        'phone',
        'company',
        'tags',
        'createdAt',
        'updatedAt',
      ]);
      expect(res.text).toContain('\r\n');
      expect(res.rows.length - 1).toBe(await total());
      const ids = res.rows.slice(1).map((row) => row[0]);
      expect(new Set(ids).size).toBe(ids.length);
      expect(ids).not.toContain(deleted.body.id);

      const row = res.rows.find((cells) => cells[0] === tricky.body.id)!;
      expect(row[1]).toBe(`'=HYPERLINK("http://evil.example")`);
      expect(row[2]).toBe('Comma, "Quote"\nNewline');
      expect(row[4]).toBe(`'+1 555 0100`);
      expect(row[5]).toBe(`'@SUM(A1:A2)`);
      expect(row[6]).toBe(`'-2+3;plain`);
      expect(row[7]).toBe(tricky.body.createdAt);
      expect(row[8]).toBe(tricky.body.updatedAt);
      expect(res.text).toContain('"Comma, ""Quote""\nNewline"');
    });

    it('exports only the contacts matching search', async () => {
      const res = await exportCsv(base, `?search=${encodeURIComponent('many.example')}`);
      expect(res.status).toBe(200);
      expect(res.rows.length - 1).toBe(2500);
      const empty = await exportCsv(base, '?search=zzzznothing');
      expect(empty.rows).toEqual([
        ['id', 'firstName', 'lastName', 'email', 'phone', 'company', 'tags', 'createdAt', 'updatedAt'],
      ]);
    });

    it('round-trips: an exported file imports as updates of the same contacts', async () => {
      const before = await total();
      const exported = await exportCsv(base, `?search=${encodeURIComponent('import.example')}`);
      const res = await importCsv(base, exported.text);
      expect(res.status).toBe(200);
      expect(res.body).toMatchObject({ created: 0, updated: 3, skipped: 0 });
      expect(await total()).toBe(before);
    });
  });

  describe('SQL statements', () => {
    it('answers a page of the contacts list with a fixed number of statements', async () => {
      statements = [];
      const res = await rest('GET', `${base}/api/contacts?limit=100`);
      expect(res.status).toBe(200);
      expect(res.body.data).toHaveLength(100);
      // the page and its total (MikroORM's findAndCount: one select, one count)
      expect(statements).toHaveLength(2);
      statements = [];
      await rest('GET', `${base}/api/contacts?limit=100&search=many`);
      expect(statements).toHaveLength(2);
    });

    it('exports in one COPY on PostgreSQL (keyset pages of 1,000 on embedded PGlite)', async () => {
      const count = await total();
      statements = [];
      const res = await exportCsv(base);
      expect(res.rows.length - 1).toBe(count);
      if (platform.config.env.DATABASE_URL) {
        expect(statements).toHaveLength(1);
        expect(statements[0]).toMatch(/copy \(select .+\) to stdout with \(format csv, header\)/is);
      } else {
        expect(statements).toHaveLength(Math.floor(count / 1000) + 1);
      }
    });
  });
});
