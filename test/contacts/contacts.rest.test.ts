import 'reflect-metadata';
import { stripVTControlCharacters } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { rest, startTestPlatform, type TestPlatform } from '#test/support/platform.js';

describe.each([
  { label: 'PostgreSQL (or PGlite when TEST_DATABASE_URL is unset)', embedded: false },
  { label: 'embedded PGlite', embedded: true },
])('contacts REST on $label', ({ embedded }) => {
  let platform: TestPlatform;
  let base: string;
  /** The contacts service's SQL, as it runs. */
  const statements: string[] = [];

  beforeAll(async () => {
    platform = await startTestPlatform(
      {},
      { embedded, onQuery: (service, sql) => service === 'contacts' && statements.push(stripVTControlCharacters(sql)) },
    );
    base = platform.urls.contactsRest;
  });
  afterAll(async () => {
    await platform?.stop();
  });

  it('answers /health with a status and a timestamp', async () => {
    const res = await rest('GET', `${base}/health`);
    expect(res.status).toBe(200);
    expect(res.body.status).toBe('ok');
    expect(new Date(res.body.timestamp).toString()).not.toBe('Invalid Date');
  });

  it('lists its endpoints at /api', async () => {
    const res = await rest('GET', `${base}/api`);
    expect(res.status).toBe(200);
    const paths = res.body.endpoints.map((e: { method: string; path: string }) => `${e.method} ${e.path}`);
    expect(paths).toEqual(
      expect.arrayContaining(['GET /api/contacts', 'POST /api/contacts', 'DELETE /api/contacts/{id}']),
    );
  });

  it('creates, reads, updates and soft deletes a contact', async () => {
    const created = await rest('POST', `${base}/api/contacts`, {
      firstName: 'Ada',
      lastName: 'Lovelace',
      email: 'ada@analytical.example',
      company: 'Analytical Engines',
      tags: ['math', 'vip'],
    });
    expect(created.status).toBe(201);
    expect(created.body).toMatchObject({ firstName: 'Ada', deleted: false, tags: ['math', 'vip'] });
    const id = created.body.id as string;

    const read = await rest('GET', `${base}/api/contacts/${id}`);
    expect(read.status).toBe(200);
    expect(read.body.email).toBe('ada@analytical.example');

    const updated = await rest('PUT', `${base}/api/contacts/${id}`, { phone: '+44 20 7946 0000' });
    expect(updated.status).toBe(200);
    expect(updated.body).toMatchObject({ phone: '+44 20 7946 0000', firstName: 'Ada' });

    const deleted = await rest('DELETE', `${base}/api/contacts/${id}`);
    expect(deleted.status).toBe(200);
    expect(deleted.body.deleted).toBe(true);

    expect((await rest('GET', `${base}/api/contacts/${id}`)).status).toBe(404);
    expect((await rest('PUT', `${base}/api/contacts/${id}`, { phone: '1' })).status).toBe(404);
    expect((await rest('DELETE', `${base}/api/contacts/${id}`)).status).toBe(404);
    const list = await rest('GET', `${base}/api/contacts?search=lovelace`);
    expect(list.body.total).toBe(0);

    // The record stays in the database with its flag set.
    const rows = await platform.subgraphs.contacts.orm.em
      .fork()
      .getConnection()
      .execute('select deleted, deleted_at from contacts.contact where id = ?', [id]);
    expect(rows[0].deleted).toBe(true);
    expect(rows[0].deleted_at).not.toBeNull();
  });

  it('pages and searches names, e-mail addresses, companies and tags', async () => {
    const people = [
      { firstName: 'Grace', lastName: 'Hopper', email: 'grace@navy.example', company: 'US Navy', tags: ['cobol'] },
      {
        firstName: 'Alan',
        lastName: 'Turing',
        email: 'alan@bletchley.example',
        company: 'Bletchley Park',
        tags: ['crypto'],
      },
      {
        firstName: 'Katherine',
        lastName: 'Johnson',
        email: 'kj@nasa.example',
        company: 'NASA',
        tags: ['orbits', 'crypto'],
      },
    ];
    for (const person of people) expect((await rest('POST', `${base}/api/contacts`, person)).status).toBe(201);

    const byName = await rest('GET', `${base}/api/contacts?search=hopp`);
    expect(byName.body.data.map((c: { lastName: string }) => c.lastName)).toEqual(['Hopper']);
    const byEmail = await rest('GET', `${base}/api/contacts?search=${encodeURIComponent('alan@bletchley.example')}`);
    expect(byEmail.body.total).toBe(1);
    const byDomain = await rest('GET', `${base}/api/contacts?search=nasa`);
    expect(byDomain.body.total).toBe(1);
    const byCompany = await rest('GET', `${base}/api/contacts?search=bletchley%20park`);
    expect(byCompany.body.data[0].lastName).toBe('Turing');
    const byTag = await rest('GET', `${base}/api/contacts?search=crypto`);
    expect(byTag.body.total).toBe(2);

    const page = await rest('GET', `${base}/api/contacts?page=2&limit=2`);
    expect(page.status).toBe(200);
    expect(page.body).toMatchObject({ page: 2, limit: 2 });
    expect(page.body.total).toBeGreaterThanOrEqual(3);
    expect(page.body.data.length).toBe(Math.min(2, page.body.total - 2));
  });

  it('finds a company or a number as it was written, punctuation and all (QUASAR-2024, 7.389)', async () => {
    const people = [
      { firstName: 'Ada', lastName: 'Coder', email: 'ada@codes.example', company: 'QUASAR-2024' },
      { firstName: 'Euler', lastName: 'Digits', email: 'euler@digits.example', company: 'Release 7.389' },
    ];
    for (const person of people) expect((await rest('POST', `${base}/api/contacts`, person)).status).toBe(201);
    const found = async (search: string) => {
      const res = await rest('GET', `${base}/api/contacts?search=${encodeURIComponent(search)}`);
      expect(res.status).toBe(200);
      expect(res.body.total).toBe(res.body.data.length);
      return res.body.data.map((contact: { lastName: string }) => contact.lastName);
    };
    // As typed, in part (a prefix, as a person types it), and by its words alone, as before.
    expect(await found('quasar-2024')).toEqual(['Coder']);
    expect(await found('QUASAR-20')).toEqual(['Coder']);
    expect(await found('quasar')).toEqual(['Coder']);
    expect(await found('7.389')).toEqual(['Digits']);
    expect(await found('release 7.3')).toEqual(['Digits']);
    expect(await found('digits release')).toEqual(['Digits']);
    // Quotes, backslashes and the query syntax's own operators are only text.
    expect(await found("quasar-2024 o'x \\ | & ! ( :*")).toEqual([]);
  });

  it('rejects bad input with a problem body naming the field and writes nothing', async () => {
    const before = (await rest('GET', `${base}/api/contacts`)).body.total;
    const cases: Array<[unknown, string]> = [
      [{ firstName: 'X', email: 'not-an-email' }, 'email'],
      [{ firstName: 'X', shoeSize: 44 }, 'shoeSize'],
      [{ firstName: 42 }, 'firstName'],
      [{ lastName: 'Only' }, 'firstName'],
    ];
    for (const [body, field] of cases) {
      const res = await rest('POST', `${base}/api/contacts`, body);
      expect(res.status).toBe(400);
      expect(res.headers.get('content-type')).toContain('application/problem+json');
      expect(res.body).toMatchObject({ status: 400, title: 'Bad Request' });
      expect(res.body.errors.map((e: { field: string }) => e.field)).toContain(field);
    }
    for (const query of ['page=0', 'page=abc', 'limit=101', 'limit=0']) {
      const res = await rest('GET', `${base}/api/contacts?${query}`);
      expect(res.status).toBe(400);
      expect(res.body.errors[0].field).toBe(query.split('=')[0]);
    }
    expect((await rest('GET', `${base}/api/contacts`)).body.total).toBe(before);
  });

  it('answers 404 for unknown and malformed ids', async () => {
    for (const id of ['00000000-0000-4000-8000-000000000000', 'not-a-uuid', "1' or '1'='1"]) {
      const res = await rest('GET', `${base}/api/contacts/${encodeURIComponent(id)}`);
      expect(res.status).toBe(404);
      expect(res.body.type).toBe('/problems/not-found');
    }
  });

  it('answers malformed JSON, large bodies, unknown routes and wrong methods with problems', async () => {
    const malformed = await rest('POST', `${base}/api/contacts`, '{"firstName": ');
    expect(malformed.status).toBe(400);
    expect(malformed.body.detail).toMatch(/JSON/);
    const large = await rest('POST', `${base}/api/contacts`, { firstName: 'x'.repeat(2 * 1024 * 1024) });
    expect(large.status).toBe(413);
    const unknown = await rest('GET', `${base}/api/nothing-here`);
    expect(unknown.status).toBe(404);
    expect(unknown.headers.get('content-type')).toContain('application/problem+json');
    const wrongMethod = await rest('PATCH', `${base}/api/contacts`);
    expect(wrongMethod.status).toBe(405);
    expect(wrongMethod.headers.get('allow')).toContain('GET');
    for (const res of [malformed, large, unknown, wrongMethod])
      expect(JSON.stringify(res.body)).not.toMatch(/at .*\.(ts|js):\d+/);
  });

  it('writes a contact with its event in one statement, and a change in one when it keeps every rule', async () => {
    statements.length = 0;
    const created = await rest('POST', `${base}/api/contacts`, { firstName: 'Mary', email: 'mary@example.com' });
    expect(created.status).toBe(201);
    expect(statements).toEqual([expect.stringMatching(/^\[query\] with created as \(insert into /)]);
    const id = created.body.id as string;
    const etagOf = async () => (await rest('GET', `${base}/api/contacts/${id}`)).headers.get('etag');
    const first = await etagOf();

    statements.length = 0;
    const changed = await rest('PUT', `${base}/api/contacts/${id}`, { firstName: ' ', tags: [' b ', 'a', 'b'] });
    expect(changed.status).toBe(200);
    expect(statements).toEqual([expect.stringMatching(/^\[query\] with changed as \(update /)]);
    expect(changed.body).toMatchObject({
      firstName: null,
      email: 'mary@example.com',
      lastName: null,
      tags: ['b', 'a'],
    });
    expect(Date.parse(changed.body.updatedAt)).toBeGreaterThan(Date.parse(created.body.updatedAt));
    const second = await etagOf();
    expect(second).not.toBe(first);
    const kept = await rest('PUT', `${base}/api/contacts/${id}`, { lastName: 'Shelley' });
    expect(kept.body).toMatchObject({ lastName: 'Shelley', tags: ['b', 'a'], email: 'mary@example.com' });

    // Each refusal says why, under the row's lock, and changes nothing.
    await rest('POST', `${base}/api/contacts`, { firstName: 'Percy', email: 'percy@example.com' });
    const third = await etagOf();
    const refusals: Array<[Record<string, unknown>, Record<string, string>, number, string]> = [
      [{ email: null }, {}, 400, 'firstName'],
      [{ email: 'percy@example.com' }, {}, 409, 'email'],
      [{ company: 'Frankenstein' }, { 'if-match': String(first) }, 412, 'If-Match'],
    ];
    for (const [body, headers, status, field] of refusals) {
      const res = await rest('PUT', `${base}/api/contacts/${id}`, body, headers);
      expect(res.status).toBe(status);
      expect(res.body.errors.map((e: { field: string }) => e.field)).toContain(field);
    }
    expect(await etagOf()).toBe(third);
    expect((await rest('GET', `${base}/api/contacts/${id}`)).body).toMatchObject({
      email: 'mary@example.com',
      company: null,
    });
    const withEtag = await rest(
      'PUT',
      `${base}/api/contacts/${id}`,
      { company: 'Frankenstein' },
      { 'if-match': String(third) },
    );
    expect(withEtag.status).toBe(200);
    expect(withEtag.body.company).toBe('Frankenstein');
  });

  it('answers a duplicate e-mail address with 409', async () => {
    const first = await rest('POST', `${base}/api/contacts`, { firstName: 'Dup', email: 'dup@example.com' });
    expect(first.status).toBe(201);
    const second = await rest('POST', `${base}/api/contacts`, { firstName: 'Dup2', email: 'DUP@example.com' });
    expect(second.status).toBe(409);
    expect(second.body.errors[0].field).toBe('email');
  });
});
