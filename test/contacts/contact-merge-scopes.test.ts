import 'reflect-metadata';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { graphql, rest, startTestPlatform, type TestPlatform } from '#test/support/platform.js';

/** With CONTACTS_AUTH=required: finding duplicates reads (contacts.read), merging and undoing change (contacts.write). */
describe('duplicates and merge with CONTACTS_AUTH=required', () => {
  let platform: TestPlatform;
  let base: string;
  const bearer = async (scopes?: string[]) => ({ authorization: `Bearer ${await platform.token('sales-1', scopes)}` });

  beforeAll(async () => {
    platform = await startTestPlatform({ CONTACTS_AUTH: 'required' });
    base = platform.urls.contactsRest;
  });
  afterAll(async () => {
    await platform?.stop();
  });

  it('lets a reader find duplicates but not merge, and a writer merge and undo', async () => {
    const writer = await bearer();
    const reader = await bearer(['contacts.read']);
    const create = async (email: string) =>
      (await rest('POST', `${base}/api/contacts`, { firstName: 'Scoped', email }, writer)).body.id as string;
    const a = await create('scoped.person@gmail.com');
    const b = await create('scopedperson+x@gmail.com');

    expect((await rest('GET', `${base}/api/contacts/${a}/duplicates`)).status).toBe(401);
    const found = await rest('GET', `${base}/api/contacts/${a}/duplicates`, undefined, reader);
    expect(found.status).toBe(200);
    expect(found.body.data.map((item: { contact: { id: string } }) => item.contact.id)).toEqual([b]);
    expect((await rest('GET', `${base}/api/contacts/duplicates`, undefined, reader)).status).toBe(200);

    const refused = await rest('POST', `${base}/api/contacts/${a}/merge`, { mergeIds: [b] }, reader);
    expect(refused.status).toBe(403);
    expect((await rest('GET', `${base}/api/contacts/${b}`, undefined, reader)).body.deleted).toBe(false);
    const gql = await graphql<any>(
      platform.urls.gateway,
      'mutation ($input: MergeContactsInput!) { mergeContacts(input: $input) { merge { id } } }',
      { input: { survivorId: a, mergeIds: [b] } },
      reader,
    );
    expect(gql.body.errors?.[0].extensions).toMatchObject({ code: 'FORBIDDEN' });

    const merged = await rest('POST', `${base}/api/contacts/${a}/merge`, { mergeIds: [b] }, writer);
    expect(merged.status).toBe(200);
    const undo = `${base}/api/contacts/merges/${merged.body.merge.id}/undo`;
    expect((await rest('POST', undo, undefined, reader)).status).toBe(403);
    expect((await rest('POST', undo, undefined, writer)).status).toBe(200);
  });
});
