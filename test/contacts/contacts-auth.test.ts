import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { graphql, rest, startTestPlatform, type TestPlatform } from '../support/platform.js';

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
});
