import 'reflect-metadata';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import {
  expectConditionalChanges,
  expectConditionalDelete,
  expectEntityTags,
  expectOneOfTwoWriters,
  type VersionedResource,
} from '#test/support/conditional-requests.js';
import { rest, startTestPlatform, type TestPlatform } from '#test/support/platform.js';

describe.each([
  { label: 'PostgreSQL (or PGlite when TEST_DATABASE_URL is unset)', embedded: false },
  { label: 'embedded PGlite', embedded: true },
])('contacts conditional requests on $label', ({ embedded }) => {
  let platform: TestPlatform;
  let base: string;

  beforeAll(async () => {
    platform = await startTestPlatform({}, { embedded });
    base = platform.urls.contactsRest;
  });
  afterAll(async () => {
    await platform?.stop();
  });

  const newContact = async (): Promise<VersionedResource> => {
    const created = await rest('POST', `${base}/api/contacts`, { firstName: 'Versioned', company: 'Start' });
    expect(created.status).toBe(201);
    return {
      url: `${base}/api/contacts/${created.body.id}`,
      headers: {},
      change: { method: 'PUT', body: (company) => ({ company }), field: 'company' },
    };
  };

  const newNote = async (): Promise<VersionedResource> => {
    const contact = await rest('POST', `${base}/api/contacts`, { firstName: 'Noted' });
    const note = await rest('POST', `${base}/api/contacts/${contact.body.id}/notes`, { body: 'First text' });
    expect(note.status).toBe(201);
    return {
      url: `${base}/api/contacts/${contact.body.id}/notes/${note.body.id}`,
      headers: {},
      change: { method: 'PUT', body: (body) => ({ body }), field: 'body' },
    };
  };

  it('tags a contact and a note with a strong ETag that answers 304 until they change', async () => {
    await expectEntityTags(await newContact());
    await expectEntityTags(await newNote());
  });

  it('tags a pipeline with a strong ETag, its stages included, that answers 304 while it holds', async () => {
    const pipelines = await rest('GET', `${base}/api/pipeline`);
    const url = `${base}/api/pipeline/${pipelines.body.data[0].id}`;
    const first = await rest('GET', url);
    expect(first.headers.get('etag')).toMatch(/^"\d+"$/);
    expect(first.body).not.toHaveProperty('version');
    expect(first.body.stages.length).toBeGreaterThan(0);
    const same = await rest('GET', url, undefined, { 'if-none-match': first.headers.get('etag')! });
    expect({ status: same.status, body: same.body }).toEqual({ status: 304, body: undefined });
  });

  it('changes a contact or a note only while If-Match holds; otherwise 412 and nothing changes', async () => {
    await expectConditionalChanges(await newContact());
    await expectConditionalChanges(await newNote());
  });

  it('lets exactly one of two writers holding the same ETag win', async () => {
    await expectOneOfTwoWriters(await newContact());
    await expectOneOfTwoWriters(await newNote());
  });

  it('deletes only at the current version, and a deleted resource matches no If-Match', async () => {
    await expectConditionalDelete(await newContact(), 200);
    await expectConditionalDelete(await newNote(), 200);
  });

  it('refuses an If-Match naming several versions with a 400 naming the header', async () => {
    const contact = await newContact();
    const two = await rest('PUT', contact.url, { company: 'Two' }, { 'if-match': '"1", "2"' });
    expect(two.status).toBe(400);
    expect(two.body.errors).toEqual([{ field: 'If-Match', message: 'must name one entity tag (or *)' }]);
  });
});
