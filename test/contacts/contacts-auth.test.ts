import { readFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { SignJWT } from 'jose';
import { graphql, rest, startTestPlatform, type TestPlatform } from '#test/support/platform.js';

describe('contacts with CONTACTS_AUTH=required', () => {
  let platform: TestPlatform;
  beforeAll(async () => {
    platform = await startTestPlatform({ CONTACTS_AUTH: 'required' });
  });
  afterAll(async () => {
    await platform?.stop();
  });

  it('demands a bearer token on every contacts route and GraphQL field, and keeps /health open', async () => {
    const base = platform.urls.contactsRest;
    expect((await rest('GET', `${base}/health`)).status).toBe(200);
    for (const [method, path] of [
      ['GET', '/api/contacts'],
      ['POST', '/api/contacts'],
      ['GET', '/api/contacts/00000000-0000-4000-8000-000000000000'],
      ['GET', '/api/pipeline'],
      ['GET', '/api/contacts/export'],
    ]) {
      const res = await rest(method, `${base}${path}`, method === 'POST' ? { firstName: 'X' } : undefined);
      expect({ method, path, status: res.status }).toEqual({ method, path, status: 401 });
    }
    const anonymous = await graphql(platform.urls.gateway, '{ contacts { totalCount } }');
    expect(anonymous.body.errors?.[0].extensions?.code).toBe('UNAUTHENTICATED');

    const headers = { authorization: `Bearer ${await platform.token('sales-1')}` };
    const created = await rest('POST', `${base}/api/contacts`, { firstName: 'Authorised' }, headers);
    expect(created.status).toBe(201);
    expect((await rest('GET', `${base}/api/contacts`, undefined, headers)).body.total).toBe(1);
    const forged = await rest('GET', `${base}/api/contacts`, undefined, { authorization: 'Bearer not.a.token' });
    expect(forged.status).toBe(401);

    // Signed by the issuer itself, but issued a day from now: its age would start counting only then.
    const keys = JSON.parse(readFileSync(path.join(platform.config.dataDir, 'identity', 'dev-issuer.json'), 'utf8'));
    const issuedAt = (iat: number) =>
      new SignJWT({})
        .setProtectedHeader({ alg: 'ES256', kid: keys.publicJwk.kid })
        .setSubject('sales-1')
        .setIssuer('urn:platform:dev-issuer')
        .setAudience('platform')
        .setIssuedAt(iat)
        .setExpirationTime(iat + 600)
        .sign(keys.privateJwk);
    const now = Math.floor(Date.now() / 1000);
    const future = await rest('GET', `${base}/api/contacts`, undefined, {
      authorization: `Bearer ${await issuedAt(now + 86_400)}`,
    });
    expect(future.status).toBe(401);
    const present = await rest('GET', `${base}/api/contacts`, undefined, {
      authorization: `Bearer ${await issuedAt(now)}`,
    });
    expect(present.status).toBe(200);
  });

  it('asks each route and field for its contacts scope; a token without a scope claim holds them all', async () => {
    const base = platform.urls.contactsRest;
    const bearer = async (scopes?: string[]) => ({
      authorization: `Bearer ${await platform.token('scoped-user', scopes)}`,
    });
    const everything = await bearer();
    const existing = await rest(
      'POST',
      `${base}/api/contacts`,
      { firstName: 'Shared', email: 'shared@example.com' },
      everything,
    );
    expect(existing.status).toBe(201);
    const importCsv = async (headers: Record<string, string>) => {
      const form = new FormData();
      form.append(
        'file',
        new Blob(['firstName,email\nImported,imported@example.com\n'], { type: 'text/csv' }),
        'contacts.csv',
      );
      const answer = await fetch(`${base}/api/contacts/import`, { method: 'POST', body: form, headers });
      return answer.status;
    };
    const statusOf = async (headers: Record<string, string>) => ({
      list: (await rest('GET', `${base}/api/contacts`, undefined, headers)).status,
      get: (await rest('GET', `${base}/api/contacts/${existing.body.id}`, undefined, headers)).status,
      pipelines: (await rest('GET', `${base}/api/pipeline`, undefined, headers)).status,
      create: (await rest('POST', `${base}/api/contacts`, { firstName: 'New' }, headers)).status,
      note: (await rest('POST', `${base}/api/contacts/${existing.body.id}/notes`, { body: 'hello' }, headers)).status,
      export: (await rest('GET', `${base}/api/contacts/export`, undefined, headers)).status,
      import: await importCsv(headers),
      graphqlRead:
        (await graphql(platform.urls.gateway, '{ contacts(first: 1) { totalCount } }', {}, headers)).body.errors?.[0]
          ?.extensions?.code ?? 'OK',
    });
    expect(await statusOf(await bearer(['contacts.read']))).toEqual({
      list: 200,
      get: 200,
      pipelines: 200,
      create: 403,
      note: 403,
      export: 403,
      import: 403,
      graphqlRead: 'OK',
    });
    expect(await statusOf(await bearer(['contacts.read', 'contacts.write']))).toEqual({
      list: 200,
      get: 200,
      pipelines: 200,
      create: 201,
      note: 201,
      export: 403,
      import: 403,
      graphqlRead: 'OK',
    });
    expect(await statusOf(await bearer(['contacts.export']))).toEqual({
      list: 403,
      get: 403,
      pipelines: 403,
      create: 403,
      note: 403,
      export: 200,
      import: 403,
      graphqlRead: 'FORBIDDEN',
    });
    expect(await statusOf(await bearer(['contacts.import']))).toEqual({
      list: 403,
      get: 403,
      pipelines: 403,
      create: 403,
      note: 403,
      export: 403,
      import: 200,
      graphqlRead: 'FORBIDDEN',
    });
    expect(await statusOf(await bearer(['posts.read', 'media.write']))).toEqual({
      list: 403,
      get: 403,
      pipelines: 403,
      create: 403,
      note: 403,
      export: 403,
      import: 403,
      graphqlRead: 'FORBIDDEN',
    });
    expect(await statusOf(everything)).toEqual({
      list: 200,
      get: 200,
      pipelines: 200,
      create: 201,
      note: 201,
      export: 200,
      import: 200,
      graphqlRead: 'OK',
    });
  });
  it('lets contacts.write alone read back what each change returns, and nothing else', async () => {
    const base = platform.urls.contactsRest;
    const writer = { authorization: `Bearer ${await platform.token('writer', ['contacts.write'])}` };
    const everything = { authorization: `Bearer ${await platform.token('writer')}` };
    const created = await rest(
      'POST',
      `${base}/api/contacts`,
      { firstName: 'Written', email: 'w@example.com' },
      writer,
    );
    expect({ status: created.status, firstName: created.body.firstName }).toEqual({
      status: 201,
      firstName: 'Written',
    });
    const id = created.body.id as string;
    const updated = await rest('PUT', `${base}/api/contacts/${id}`, { firstName: 'Rewritten' }, writer);
    expect({ status: updated.status, firstName: updated.body.firstName }).toEqual({
      status: 200,
      firstName: 'Rewritten',
    });

    const note = await rest('POST', `${base}/api/contacts/${id}/notes`, { body: 'first' }, writer);
    expect({ status: note.status, body: note.body.body }).toEqual({ status: 201, body: 'first' });
    const noteChanged = await rest(
      'PUT',
      `${base}/api/contacts/${id}/notes/${note.body.id}`,
      { body: 'second' },
      writer,
    );
    expect({ status: noteChanged.status, body: noteChanged.body.body }).toEqual({ status: 200, body: 'second' });
    expect((await rest('DELETE', `${base}/api/contacts/${id}/notes/${note.body.id}`, undefined, writer)).status).toBe(
      200,
    );

    const pipelines = await rest('GET', `${base}/api/pipeline`, undefined, everything);
    const stageId = pipelines.body.data[0].stages[1].id as string;
    const moved = await rest('PUT', `${base}/api/pipeline/${id}/move`, { stageId }, writer);
    expect({ status: moved.status, contactId: moved.body.contactId }).toEqual({ status: 200, contactId: id });

    // Through the gateway too, where the answer of the mutation is read field by field.
    const answer = await graphql(
      platform.urls.gateway,
      'mutation { createContact(input: { firstName: "Graph" }) { id firstName tags } }',
      {},
      writer,
    );
    expect(answer.body.errors).toBeUndefined();
    expect(answer.body.data?.createContact).toMatchObject({ firstName: 'Graph', tags: [] });

    // Reading is still contacts.read's: the write scope covers only what a change returns.
    expect((await rest('GET', `${base}/api/contacts/${id}`, undefined, writer)).status).toBe(403);
    const read = await graphql(platform.urls.gateway, `{ contact(id: "${id}") { firstName } }`, {}, writer);
    expect(read.body.errors?.[0].extensions?.code).toBe('FORBIDDEN');
    const deleted = await rest('DELETE', `${base}/api/contacts/${id}`, undefined, writer);
    expect({ status: deleted.status, deleted: deleted.body.deleted }).toEqual({ status: 200, deleted: true });
  });
});
