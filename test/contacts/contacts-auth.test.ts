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
});
