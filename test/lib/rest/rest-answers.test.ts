import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { loadConfig } from '#lib/config.js';
import type { GraphQLClient, GraphQLResult } from '#lib/rest/graphql-client.js';
import { listen, type RunningServer } from '#lib/http/http.js';
import { createLogger } from '#lib/observability/logger.js';
import { createRestApp } from '#lib/rest/rest.js';
import { operationRunner, type OperationDocument } from '#lib/rest/run-operation.js';

/**
 * Every root field of the graph is nullable (one service's refusal must not blank another's data),
 * yet a REST route answers as it did when only lookups were: the runner settles a root field that
 * answers null. The gateway here answers what each case needs.
 */
describe('REST routes over nullable root fields', () => {
  // Operation texts typed as GraphQL Code Generator types them (`operations.generated.ts`).
  const contacts = 'query Contacts { contacts { totalCount } }' as unknown as OperationDocument<
    { contacts: { totalCount: number } | null },
    Record<string, never>
  >;
  const contact = 'query Contact { contact { id } }' as unknown as OperationDocument<
    { contact: { id: string } | null },
    Record<string, never>
  >;
  let answer: GraphQLResult<unknown> = {};
  const gateway: Pick<GraphQLClient, 'execute'> = {
    execute: <Data>() => Promise.resolve(answer as GraphQLResult<Data>),
  };
  let server: RunningServer;

  beforeAll(async () => {
    const config = loadConfig({ LOG_LEVEL: 'silent' });
    const run = operationRunner(gateway);
    const app = createRestApp({
      name: 'rest-answers-test',
      config,
      logger: createLogger(config),
      routes: [
        {
          method: 'get',
          path: '/contacts',
          summary: 'A list',
          doc: { operationId: 'listContacts', tag: 'contacts', answer: { status: 200, description: 'A total' } },
          handler: async (req, res) => {
            // Typed non-null: the runner answers every root field present.
            res.json({ total: (await run(contacts, {}, req)).contacts.totalCount });
          },
        },
        {
          method: 'get',
          path: '/contact',
          summary: 'A lookup',
          doc: { operationId: 'getContact', tag: 'contacts', answer: { status: 200, description: 'A contact' } },
          handler: async (req, res) => {
            res.json((await run(contact, {}, req, { lookup: 'Contact' })).contact);
          },
        },
      ],
    });
    server = await listen(app, 0, '127.0.0.1');
  });
  afterAll(async () => {
    await server?.close();
  });

  const get = async (route: string) => {
    const response = await fetch(`${server.url}${route}`);
    return { status: response.status, body: (await response.json()) as Record<string, unknown> };
  };

  it('answers the data when every root field is there', async () => {
    answer = { data: { contacts: { totalCount: 3 } } };
    expect(await get('/contacts')).toEqual({ status: 200, body: { total: 3 } });
  });

  it('answers 500 for a root field null without an error, as the non-null check did', async () => {
    answer = { data: { contacts: null } };
    const { status, body } = await get('/contacts');
    expect(status).toBe(500);
    expect(body).toMatchObject({ status: 500, code: 'INTERNAL_SERVER_ERROR' });
  });

  it('answers 404 naming the thing for a lookup that answers null', async () => {
    answer = { data: { contact: null } };
    const { status, body } = await get('/contact');
    expect(status).toBe(404);
    expect(body).toMatchObject({ status: 404, code: 'NOT_FOUND', detail: 'Contact not found' });
  });

  it('answers the error of a root field that is null with one', async () => {
    answer = {
      data: { contacts: null },
      errors: [{ message: 'Authentication required', path: ['contacts'], extensions: { code: 'UNAUTHENTICATED' } }],
    };
    const { status, body } = await get('/contacts');
    expect(status).toBe(401);
    expect(body).toMatchObject({ code: 'UNAUTHENTICATED', detail: 'Authentication required' });
  });
});
