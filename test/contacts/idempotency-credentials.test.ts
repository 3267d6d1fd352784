import 'reflect-metadata';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { randomUUID } from 'node:crypto';
import { Readable } from 'node:stream';
import { createStorage } from '#lib/storage/create-storage.js';
import { graphql, rest, startTestPlatform, type TestPlatform } from '#test/support/platform.js';

/**
 * With CONTACTS_AUTH=required, an Idempotency-Key's record answers only the token that made the
 * first request (same user, same scopes); and an upload's commit under a key is told apart by the
 * upload it commits, not only by the fields it restates.
 */
describe.each([
  { label: 'PostgreSQL (or PGlite when TEST_DATABASE_URL is unset)', embedded: false },
  { label: 'embedded PGlite', embedded: true },
])('contacts Idempotency-Key per credential on $label', ({ embedded }) => {
  let platform: TestPlatform;
  let base: string;
  let writer: Record<string, string>;
  let reader: Record<string, string>;

  beforeAll(async () => {
    platform = await startTestPlatform({ CONTACTS_AUTH: 'required' }, { embedded });
    base = platform.urls.contactsRest;
    writer = { authorization: `Bearer ${await platform.token('clerk', ['contacts.read', 'contacts.write'])}` };
    reader = { authorization: `Bearer ${await platform.token('clerk', ['contacts.read'])}` };
  });
  afterAll(async () => {
    await platform?.stop();
  });

  const gql = async <Data>(query: string, variables: Record<string, unknown>, headers: Record<string, string>) =>
    (await graphql<Data>(platform.urls.gateway, query, variables, headers)).body;

  it('never answers a contacts.write answer to a contacts.read token of the same user', async () => {
    const key = randomUUID();
    const body = { firstName: `Secretive${key.slice(0, 8)}`, email: `${key.slice(0, 8)}@private.example` };
    const first = await rest('POST', `${base}/api/contacts`, body, { ...writer, 'idempotency-key': key });
    expect(first.status).toBe(201);
    const again = await rest('POST', `${base}/api/contacts`, body, { ...reader, 'idempotency-key': key });
    expect(again.status).toBe(403);
    expect(again.headers.get('idempotent-replayed')).toBeNull();
    expect(JSON.stringify(again.body)).not.toContain(first.body.id);
    // The writer's own retry replays, as before.
    const retried = await rest('POST', `${base}/api/contacts`, body, { ...writer, 'idempotency-key': key });
    expect({ status: retried.status, body: retried.body }).toEqual({ status: 201, body: first.body });
    expect(retried.headers.get('idempotent-replayed')).toBe('true');
  });

  it('refuses a commit of another upload under the same key (422), rather than answering the first', async () => {
    const storage = createStorage(platform.config);
    const contact = await rest('POST', `${base}/api/contacts`, { firstName: 'Uploader' }, writer);
    const upload = async (bytes: string) => {
      const slot = (
        await gql<{ reserveAttachmentUpload: { uploadToken: string; storageKey: string } }>(
          'mutation ($c: ID!) { reserveAttachmentUpload(contactId: $c, filename: "a.txt", contentType: "text/plain") { uploadToken storageKey } }',
          { c: contact.body.id },
          writer,
        )
      ).data!.reserveAttachmentUpload;
      await storage.put(slot.storageKey, Readable.from([bytes]), { contentType: 'text/plain', maxBytes: 100 });
      return slot.uploadToken;
    };
    const key = randomUUID();
    const RECORD = 'mutation ($uploadToken: String!) { recordAttachment(uploadToken: $uploadToken) { id size } }';
    const commit = (uploadToken: string) =>
      gql<{ recordAttachment: { id: string; size: number } }>(
        RECORD,
        { uploadToken },
        {
          ...writer,
          'idempotency-key': key,
        },
      );
    const firstToken = await upload('first file');
    const first = await commit(firstToken);
    expect(first.data!.recordAttachment.size).toBe(10);
    // The same commit sent again (its answer lost) is the same request: replayed.
    expect((await commit(firstToken)).data).toEqual(first.data);

    const second = await commit(await upload('another, longer file'));
    expect(second.data?.recordAttachment).toBeFalsy();
    expect(second.errors?.[0].extensions).toMatchObject({
      code: 'UNPROCESSABLE_CONTENT',
      errors: [{ field: 'Idempotency-Key', message: expect.any(String) }],
    });
  });
});
