import 'reflect-metadata';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { SignJWT } from 'jose';
import { linksOf } from '#test/support/links.js';
import { rest, startTestPlatform, type TestPlatform } from '#test/support/platform.js';

describe.each([
  { label: 'PostgreSQL (or PGlite when TEST_DATABASE_URL is unset)', embedded: false },
  { label: 'embedded PGlite', embedded: true },
])('contacts REST headers on $label', ({ embedded }) => {
  let platform: TestPlatform;
  let base: string;

  beforeAll(async () => {
    platform = await startTestPlatform({ CONTACTS_AUTH: 'required' }, { embedded });
    base = platform.urls.contactsRest;
  });
  afterAll(async () => {
    await platform?.stop();
  });

  const as = async () => ({ authorization: `Bearer ${await platform.token('sales-headers')}` });

  it('answers a 201 with the Location of what it created, and the body as before', async () => {
    const headers = await as();
    const created = await rest('POST', `${base}/api/contacts`, { firstName: 'Located' }, headers);
    expect(created.status).toBe(201);
    expect(created.headers.get('location')).toBe(`/api/contacts/${created.body.id}`);
    const read = await rest('GET', `${base}${created.headers.get('location')}`, undefined, headers);
    expect(read.body).toEqual(created.body);

    const note = await rest('POST', `${base}/api/contacts/${created.body.id}/notes`, { body: 'Hello' }, headers);
    expect(note.status).toBe(201);
    expect(note.headers.get('location')).toBe(`/api/contacts/${created.body.id}/notes/${note.body.id}`);
    expect((await rest('GET', `${base}${note.headers.get('location')}`, undefined, headers)).body.id).toBe(
      note.body.id,
    );
  });

  it('links the pages of a list (first, prev, next, last), keeping the other query parameters', async () => {
    const headers = await as();
    for (let i = 0; i < 5; i += 1) {
      expect(
        (await rest('POST', `${base}/api/contacts`, { firstName: `Paged${i}`, tags: ['paged'] }, headers)).status,
      ).toBe(201);
    }
    const first = await rest('GET', `${base}/api/contacts?search=paged&limit=2`, undefined, headers);
    expect(first.body).toMatchObject({ page: 1, limit: 2, total: 5 });
    expect(linksOf(first.headers.get('link'))).toEqual({
      first: '/api/contacts?search=paged&limit=2&page=1',
      next: '/api/contacts?search=paged&limit=2&page=2',
      last: '/api/contacts?search=paged&limit=2&page=3',
    });
    const middle = await rest('GET', `${base}/api/contacts?search=paged&limit=2&page=2`, undefined, headers);
    expect(linksOf(middle.headers.get('link'))).toEqual({
      first: '/api/contacts?search=paged&limit=2&page=1',
      prev: '/api/contacts?search=paged&limit=2&page=1',
      next: '/api/contacts?search=paged&limit=2&page=3',
      last: '/api/contacts?search=paged&limit=2&page=3',
    });
    const last = await rest('GET', `${base}${linksOf(middle.headers.get('link')).last}`, undefined, headers);
    expect(last.body.data).toHaveLength(1);
    expect(Object.keys(linksOf(last.headers.get('link')))).toEqual(['first', 'prev', 'last']);
  });

  it('answers a 401 with WWW-Authenticate: Bearer, naming a refused token invalid_token, bodies unchanged', async () => {
    const missing = await rest('GET', `${base}/api/contacts`);
    expect(missing.status).toBe(401);
    expect(missing.headers.get('www-authenticate')).toBe('Bearer');

    const forged = await rest('GET', `${base}/api/contacts`, undefined, { authorization: 'Bearer not.a.token' });
    expect(forged.status).toBe(401);
    expect(forged.headers.get('www-authenticate')).toBe('Bearer error="invalid_token"');
    expect(forged.body).toEqual({ ...missing.body });

    const keys = JSON.parse(readFileSync(path.join(platform.config.dataDir, 'identity', 'dev-issuer.json'), 'utf8'));
    const now = Math.floor(Date.now() / 1000);
    const expired = await new SignJWT({})
      .setProtectedHeader({ alg: 'ES256', kid: keys.publicJwk.kid })
      .setSubject('sales-headers')
      .setIssuer('urn:platform:dev-issuer')
      .setAudience('platform')
      .setIssuedAt(now - 7200)
      .setExpirationTime(now - 3600)
      .sign(keys.privateJwk);
    const late = await rest('GET', `${base}/api/contacts`, undefined, { authorization: `Bearer ${expired}` });
    expect(late.status).toBe(401);
    expect(late.headers.get('www-authenticate')).toBe('Bearer error="invalid_token"');
  });
});
