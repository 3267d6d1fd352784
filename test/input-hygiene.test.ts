import 'reflect-metadata';
import http from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { graphql, rest, startTestPlatform, type TestPlatform } from '#test/support/platform.js';
import { rawRequest } from '#test/support/raw-http.js';

interface Endpoint {
  method: string;
  path: string;
}

/** Every route a REST service lists at `GET /api`, with its `{param}`s filled in. */
async function endpointsOf(base: string): Promise<Endpoint[]> {
  const listed = (await rest('GET', `${base}/api`)).body.endpoints as Endpoint[];
  return listed.map((endpoint) => ({
    ...endpoint,
    path: endpoint.path.replace(/\{\w+\}/g, '00000000-0000-4000-8000-000000000000'),
  }));
}

describe('input that PostgreSQL cannot store, bad paging, oversized documents: 400 naming the field, everywhere alike', () => {
  let platform: TestPlatform;
  let bases: string[];
  let token: string;

  beforeAll(async () => {
    platform = await startTestPlatform();
    bases = [platform.urls.socialRest, platform.urls.surveysRest, platform.urls.contactsRest];
    token = await platform.token('hygiene-user');
  });
  afterAll(async () => {
    await platform?.stop();
  });

  it('refuses a NUL character and a lone surrogate on every write route of every service, naming the field', async () => {
    let writeRoutes = 0;
    for (const base of bases) {
      for (const { method, path } of await endpointsOf(base)) {
        if (!['POST', 'PUT', 'PATCH'].includes(method)) continue;
        writeRoutes++;
        const nul = await rest(method, `${base}${path}`, '{"content":"a\\u0000b","firstName":"ok"}', {
          authorization: `Bearer ${token}`,
        });
        expect({ route: `${method} ${path}`, status: nul.status, errors: nul.body?.errors }).toEqual({
          route: `${method} ${path}`,
          status: 400,
          errors: [{ field: 'content', message: expect.stringContaining('NUL') }],
        });
        const surrogate = await rest(method, `${base}${path}`, '{"tags":["fine","\\ud800"]}', {
          authorization: `Bearer ${token}`,
        });
        expect({
          route: `${method} ${path}`,
          status: surrogate.status,
          field: surrogate.body?.errors?.[0]?.field,
        }).toEqual({
          route: `${method} ${path}`,
          status: 400,
          field: 'tags[1]',
        });
      }
    }
    expect(writeRoutes).toBeGreaterThanOrEqual(20);
  });

  it('stores nothing of a refused body, keeps what can be stored, and refuses NUL in a query parameter too', async () => {
    const contacts = platform.urls.contactsRest;
    const refused = await rest(
      'POST',
      `${contacts}/api/contacts`,
      '{"firstName":"Nul\\u0000","email":"nul@hygiene.example"}',
    );
    expect(refused.status).toBe(400);
    expect(refused.body.errors).toEqual([{ field: 'firstName', message: expect.stringContaining('NUL') }]);
    expect((await rest('GET', `${contacts}/api/contacts?search=nul@hygiene.example`)).body.total).toBe(0);
    // A valid pair of surrogates is an ordinary character (an emoji) and is stored as sent.
    const emoji = await rest(
      'POST',
      `${contacts}/api/contacts`,
      '{"firstName":"Ok \\ud83d\\ude00","email":"emoji@hygiene.example"}',
    );
    expect(emoji.status).toBe(201);
    expect(emoji.body.firstName).toBe('Ok 😀');
    const search = await rest('GET', `${contacts}/api/contacts?search=a%00b`);
    expect(search.status).toBe(400);
    expect(search.body.errors).toEqual([{ field: 'search', message: expect.stringContaining('NUL') }]);
  });

  it('refuses a body that is not valid UTF-8 instead of storing U+FFFD', async () => {
    const body = Buffer.concat([
      Buffer.from('{"firstName":"Bad '),
      Buffer.from([0xc3, 0x28]),
      Buffer.from('","email":"utf8@hygiene.example"}'),
    ]);
    const answer = await new Promise<{ status: number; body: any }>((resolve, reject) => {
      const request = http.request(
        `${platform.urls.contactsRest}/api/contacts`,
        { method: 'POST', headers: { 'content-type': 'application/json' } },
        (response) => {
          let text = '';
          response.on('data', (chunk: Buffer) => (text += chunk.toString()));
          response.on('end', () => resolve({ status: response.statusCode ?? 0, body: JSON.parse(text) }));
        },
      );
      request.on('error', reject);
      request.end(body);
    });
    expect(answer.status).toBe(400);
    expect(answer.body.errors).toEqual([{ field: 'body', message: 'is not valid UTF-8' }]);
    expect(
      (await rest('GET', `${platform.urls.contactsRest}/api/contacts?search=utf8@hygiene.example`)).body.total,
    ).toBe(0);
  });

  it('refuses the same over GraphQL, at the gateway and at a subgraph: variables by path, NUL escapes in the document', async () => {
    const mutation = 'mutation ($input: CreateContactInput!) { createContact(input: $input) { id } }';
    for (const url of [platform.urls.gateway, platform.subgraphs.contacts.url]) {
      const variable = await graphql(url, mutation, { input: { firstName: 'x\u0000', email: 'gql@hygiene.example' } });
      expect(variable.status).toBe(400);
      expect(variable.body.errors?.[0]?.extensions).toMatchObject({
        code: 'BAD_USER_INPUT',
        errors: [{ field: 'input.firstName' }],
      });
      const literal = await graphql(url, 'mutation { createContact(input: { firstName: "x\\u0000" }) { id } }');
      expect(literal.status).toBe(400);
      expect(literal.body.errors?.[0]?.extensions).toMatchObject({
        code: 'BAD_USER_INPUT',
        errors: [{ field: 'query' }],
      });
    }
    // An escaped backslash followed by "u0000" is six ordinary characters.
    const text = await graphql(
      platform.urls.gateway,
      'mutation { createContact(input: { firstName: "x\\\\u0000", email: "esc@hygiene.example" }) { firstName } }',
    );
    expect(text.body.errors).toBeUndefined();
  });

  it('answers a document over the token limit with 400, not 500', async () => {
    const query = `{ ${Array.from({ length: 6000 }, () => '__typename').join(' ')} }`;
    const answer = await rawRequest(platform.urls.gateway, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ query }),
    });
    expect(answer.status).toBe(400);
    expect(JSON.parse(answer.body.toString()).errors).toEqual([
      expect.objectContaining({ message: expect.stringMatching(/5000 tokens/) }),
    ]);
  });

  it('refuses a cursor that decodes to no position with BAD_USER_INPUT naming `after`, on every connection', async () => {
    const encode = (text: string) => Buffer.from(text).toString('base64url');
    const uuid = '00000000-0000-4000-8000-000000000000';
    // Keyset cursors well formed but beyond anything PostgreSQL or a list holds (a time, a sequence),
    // and the offset and sequence shapes the lists answered before keyset cursors.
    const cursors = [
      encode('o:99999999999999999999'),
      encode('s:99999999999999999999'),
      encode(JSON.stringify(['99999999999999999999'])),
      encode(JSON.stringify(['+275760-09-13T00:00:00.000Z', uuid])),
      encode(JSON.stringify(['-271821-04-20T00:00:00.000Z', uuid])),
    ];
    type Field = { name: string; args: { name: string; type: { kind: string } }[] };
    const schema = await graphql<{ __type: { fields: Field[] } }>(
      platform.urls.gateway,
      '{ __type(name: "Query") { fields { name args { name type { kind } } } } }',
    );
    // Surveys answer only a surveyor (a mailed link's session, or a token with an e-mail), not this
    // bearer token; their lists decode cursors with the same code as the lists here
    // (test/lib/data/keyset.test.ts; surveyEvents: test/surveys/survey-event-stream.test.ts).
    const surveyorsOnly = ['surveys', 'surveyEvents'];
    const connections = schema.body.data!.__type.fields.filter(
      (field) => !surveyorsOnly.includes(field.name) && field.args.some((arg) => arg.name === 'after'),
    );
    expect(connections.length).toBeGreaterThanOrEqual(14);
    // The lists under one contact or webhook need one that exists: an unknown one is NOT_FOUND first.
    const user = { authorization: `Bearer ${token}` };
    const contact = await graphql<{ createContact: { id: string } }>(
      platform.urls.gateway,
      'mutation { createContact(input: { firstName: "Cursor" }) { id } }',
      {},
      user,
    );
    const webhook = await graphql<{ createWebhook: { webhook: { id: string } } }>(
      platform.urls.gateway,
      'mutation { createWebhook(input: { url: "http://127.0.0.1:9/hook", events: ["post.approved"] }) { webhook { id } } }',
      {},
      user,
    );
    const ids: Record<string, string | undefined> = {
      contactId: contact.body.data?.createContact.id,
      webhookId: webhook.body.data?.createWebhook.webhook.id,
    };
    expect(ids).toEqual({ contactId: expect.any(String), webhookId: expect.any(String) });
    const answers = [];
    for (const field of connections) {
      const required = field.args
        .filter((arg) => arg.type.kind === 'NON_NULL')
        .map((arg) => `${arg.name}: "${ids[arg.name]}"`);
      const query = `query ($after: String) { ${field.name}(${[...required, 'after: $after'].join(', ')}) { __typename } }`;
      for (const after of cursors) {
        const answer = await graphql(platform.urls.gateway, query, { after }, user);
        answers.push({ field: field.name, after, extensions: answer.body.errors?.[0]?.extensions });
      }
    }
    expect(answers).toEqual(
      answers.map(({ field, after }) => ({
        field,
        after,
        extensions: expect.objectContaining({
          code: 'BAD_USER_INPUT',
          errors: [{ field: 'after', message: 'is not a cursor of this list' }],
        }),
      })),
    );
  });

  it('refuses bad page and limit values with 400 naming the parameter, on every list route alike', async () => {
    const bad = ['-1', '0', '1.5', 'abc', '', '99999999999', '1e3', ' 1'];
    let listRoutes = 0;
    for (const base of bases) {
      for (const { method, path } of await endpointsOf(base)) {
        if (method !== 'GET' || !/\/api\//.test(path)) continue;
        listRoutes++;
        for (const parameter of ['page', 'limit']) {
          for (const value of bad) {
            const answer = await rest('GET', `${base}${path}?${parameter}=${encodeURIComponent(value)}`, undefined, {
              authorization: `Bearer ${token}`,
            });
            expect({
              route: path,
              parameter,
              value,
              status: answer.status,
              field: answer.body?.errors?.[0]?.field,
            }).toEqual({
              route: path,
              parameter,
              value,
              status: 400,
              field: parameter,
            });
          }
          for (const query of [`${parameter}[]=`, `${parameter}=1&${parameter}=2`, `${parameter}[x]=1`]) {
            const answer = await rest('GET', `${base}${path}?${query}`, undefined, {
              authorization: `Bearer ${token}`,
            });
            expect({ route: path, query, status: answer.status, field: answer.body?.errors?.[0]?.field }).toEqual({
              route: path,
              query,
              status: 400,
              field: parameter,
            });
          }
        }
      }
    }
    expect(listRoutes).toBeGreaterThanOrEqual(10);
    // Good values still work, and the maximum is accepted.
    const good = await rest('GET', `${platform.urls.contactsRest}/api/contacts?page=2&limit=100`);
    expect(good.status).toBe(200);
    expect(good.body).toMatchObject({ page: 2, limit: 100 });
    expect((await rest('GET', `${platform.urls.contactsRest}/api/contacts?limit=101`)).status).toBe(400);
  });
});
