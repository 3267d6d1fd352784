import 'reflect-metadata';
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { OperationTypeNode, type GraphQLSchema } from 'graphql';
import type { GatewayContext } from '#lib/rest/graphql-client.js';
import { REST_OPERATION_TEXTS } from '#rest-adapters/operation-texts.js';
import { apiSchema, operationOf, plainVariables } from '#test/support/operation-variables.js';
import { startTestPlatform, type TestPlatform } from '#test/support/platform.js';
import { TwinGateways } from '#test/support/twin-gateways.js';

/** Documents of a test manifest (TRUSTED_DOCUMENTS): fixed texts besides the REST adapters' own. */
const MANIFEST = {
  byId: 'query ById($id: ID!) { contact(id: $id) { id firstName lastName email tags deleted } }',
  aliased:
    'query Aliased($id: ID!) { first: contact(id: $id) { id name: firstName } second: contact(id: $id) { __typename email } }',
  merged:
    'query Merged($search: String) { contactPage(limit: 3, search: $search) { items { id ...Names } total items { email ...Names } } }\n' +
    'fragment Names on Contact { firstName lastName }',
  crossing: 'query Crossing($id: ID!) { contact(id: $id) { id surveys { id venueName } } }',
  directive: 'query Directive($id: ID!, $full: Boolean!) { contact(id: $id) { id email @include(if: $full) } }',
  write: 'mutation Write($input: CreateContactInput!) { createContact(input: $input) { id firstName email } }',
};

/**
 * The short path (gateway/short-path.ts) answers a fixed operation exactly as the full path does: every
 * operation the REST adapters ship and every document of a manifest, run on both paths and compared
 * byte for byte, for answers, refusals, not found, invalid input and a subgraph that fails.
 */
describe('the gateway short path of fixed operations', () => {
  let platform: TestPlatform;
  let twins: TwinGateways;
  let schema: GraphQLSchema;
  let user: GatewayContext;
  const anyone = (): GatewayContext => ({ forwardHeaders: {}, requestId: randomUUID(), clientAddress: '127.0.0.9' });
  const asUser = (): GatewayContext => ({ ...user, requestId: randomUUID() });
  const named = (name: string) => REST_OPERATION_TEXTS.find((text) => operationOf(text).name?.value === name)!;

  /** Runs on both paths; answers the short path's answer, parsed, after checking both are the same. */
  async function same(query: string, variables: Record<string, unknown>, context: GatewayContext, short = true) {
    const answer = await twins.run(query, variables, context);
    const seen = {
      query: query.slice(0, 60),
      short: answer.short,
      sameCalls: answer.sameCalls,
      shortPath: answer.shortPath,
    };
    expect(seen).toEqual({ query: query.slice(0, 60), short: answer.full, sameCalls: true, shortPath: short });
    return answer.short.startsWith('thrown') ? answer.short : (JSON.parse(answer.short) as Record<string, any>);
  }

  beforeAll(async () => {
    platform = await startTestPlatform();
    const { social, surveys, contacts } = platform.subgraphs;
    twins = await TwinGateways.start(
      platform.config,
      { social: social.local, surveys: surveys.local, contacts: contacts.local },
      [...REST_OPERATION_TEXTS, ...Object.values(MANIFEST)],
    );
    schema = apiSchema();
    user = { ...anyone(), forwardHeaders: { authorization: `Bearer ${await platform.token('short-path-user')}` } };
  }, 120_000);

  afterAll(async () => {
    await twins?.close();
    await platform?.stop();
  });

  it('answers every REST operation the same, as anyone and as a user, on plain variables', async () => {
    const texts = REST_OPERATION_TEXTS.filter((text) => operationOf(text).operation !== OperationTypeNode.SUBSCRIPTION);
    const differences: string[] = [];
    const short = new Set<string>();
    for (const text of texts) {
      const name = operationOf(text).name?.value ?? '';
      // Twice each: the first run plans the operation (full path on both), the second may take the short path.
      for (const context of [anyone, asUser, anyone, asUser]) {
        const answer = await twins.run(text, plainVariables(schema, text), context());
        if (answer.short !== answer.full || !answer.sameCalls)
          differences.push(`${name}: short ${answer.short.slice(0, 300)}\n  full ${answer.full.slice(0, 300)}`);
        if (answer.shortPath) short.add(name);
      }
    }
    expect(differences).toEqual([]);
    // Every REST operation is answered by one subgraph: each takes the short path.
    expect(texts.map((text) => operationOf(text).name?.value).filter((name) => !short.has(name!))).toEqual([]);
  }, 120_000);

  it('answers reads and writes of real rows the same, and refusals of invalid input', async () => {
    const created = await same(
      named('CreateContact'),
      { input: { firstName: 'Ada', email: `ada-${randomUUID()}@example.com` } },
      anyone(),
    );
    const id = (created as any).data.createContact.id as string;
    await same(named('Contact'), { id }, anyone());
    await same(named('ContactPage'), { search: 'Ada', page: 1, limit: 5 }, anyone());
    await same(named('UpdateContact'), { id, input: { lastName: 'Lovelace' }, ifVersion: 1 }, anyone());
    // A stale version: refused by the subgraph (412's code), its fields and extensions as they are.
    await same(named('UpdateContact'), { id, input: { lastName: 'L.' }, ifVersion: 1 }, anyone());
    const invalid = await same(named('CreateContact'), { input: { email: 'not an address' } }, anyone());
    expect((invalid as any).errors[0].extensions.code).toBe('BAD_USER_INPUT');
    await same(named('CreateNote'), { contactId: id, input: { body: 'first' } }, anyone());
    await same(named('NotePage'), { contactId: id }, anyone());
    // Variables that do not fit the operation: the full path answers them, on both gateways.
    await same(named('Contact'), { id: { not: 'an id' } }, anyone(), false);
    await same(named('ContactPage'), { page: 'one' }, anyone(), false);
    const brand = await same(named('CreateBrand'), { input: { name: 'Short' } }, asUser());
    await same(named('BrandPage'), { page: 1, limit: 10 }, asUser());
    const post = await same(
      named('CreatePost'),
      { input: { content: 'hi', brandId: (brand as any).data.createBrand.id } },
      asUser(),
    );
    await same(named('Post'), { id: (post as any).data.createPost.id }, asUser());
    await same(named('ContentQueue'), {}, asUser());
    await same(named('DeleteContact'), { id }, anyone());
  });

  it('states rate limits and idempotent replays as the full path does', async () => {
    const limited = await same(named('RequestMagicLink'), { input: { email: 'limits@example.com' } }, anyone());
    expect(Object.keys((limited as any).extensions ?? {})).toContain('rateLimit');
    const key = { ...anyone(), forwardHeaders: { 'idempotency-key': randomUUID() } };
    const input = { input: { firstName: 'Once', email: `once-${randomUUID()}@example.com` } };
    await same(named('CreateContact'), input, key);
    const replay = await same(named('CreateContact'), input, { ...key, requestId: randomUUID() });
    expect((replay as any).extensions).toEqual(expect.objectContaining({ idempotentReplay: true }));
  });

  it('answers a subgraph that fails the same: masked, named, at its fields', async () => {
    const id = randomUUID();
    await same(named('Contact'), { id }, anyone());
    twins.failNext({ thrown: new Error('the subgraph fell over') });
    const thrown = await same(named('Contact'), { id }, anyone());
    expect((thrown as any).errors[0].extensions.code).toBe('INTERNAL_SERVER_ERROR');
    twins.failNext({
      answer: {
        errors: [{ message: 'Unexpected error', path: ['contact'], extensions: { code: 'SERVICE_UNAVAILABLE' } }],
      },
    });
    const unavailable = await same(named('Contact'), { id }, anyone());
    expect((unavailable as any).errors[0].extensions).toEqual({ code: 'SERVICE_UNAVAILABLE', serviceName: 'contacts' });
    twins.failNext({ answer: { data: null, errors: [{ message: 'odd', extensions: { code: 'SOMETHING_ELSE' } }] } });
    await same(named('ContactPage'), {}, anyone());
  });

  it("answers a manifest's documents the same, and keeps crossing and conditional ones on the full path", async () => {
    const created = await same(
      MANIFEST.write,
      { input: { firstName: 'Grace', email: `grace-${randomUUID()}@example.com` } },
      anyone(),
      false,
    );
    await same(MANIFEST.write, { input: { firstName: 'Alan', email: `alan-${randomUUID()}@example.com` } }, anyone());
    const id = (created as any).data.createContact.id as string;
    for (const document of [MANIFEST.byId, MANIFEST.aliased, MANIFEST.merged]) {
      const variables = { id, search: 'Grace' };
      await same(document, variables, anyone(), false);
      await same(document, variables, anyone());
      await same(document, { ...variables, id: randomUUID() }, anyone());
    }
    for (const [document, variables] of [
      [MANIFEST.crossing, { id }],
      [MANIFEST.directive, { id, full: true }],
    ] as const) {
      await same(document, variables, asUser(), false);
      await same(document, variables, asUser(), false);
    }
  });

  it('answers the same as production configures the gateway (no introspection, field suggestions hidden)', async () => {
    const { social, surveys, contacts } = platform.subgraphs;
    const production = await TwinGateways.start(
      { ...platform.config, isProduction: true },
      { social: social.local, surveys: surveys.local, contacts: contacts.local },
    );
    try {
      const cases: Array<[string, Record<string, unknown>]> = [
        [named('Contact'), { id: randomUUID() }],
        [named('CreateContact'), { input: { email: 'not an address' } }],
        [named('PostPage'), {}],
      ];
      for (const [text, variables] of cases) {
        for (let round = 0; round < 2; round++) {
          const answer = await production.run(text, variables, anyone());
          expect({ ...answer, round }).toEqual({
            short: answer.full,
            full: answer.full,
            sameCalls: true,
            shortPath: round === 1,
            round,
          });
        }
      }
      production.failNext({ thrown: new Error('the subgraph fell over') });
      const failed = await production.run(named('Contact'), { id: randomUUID() }, anyone());
      expect(failed).toEqual({ short: failed.full, full: failed.full, sameCalls: true, shortPath: true });
      expect(JSON.parse(failed.short).errors[0].message).not.toContain('fell over');
    } finally {
      await production.close();
    }
  });

  it('answers over HTTP with the bytes Apollo Server writes: status, content type, body', async () => {
    const { id } = (
      (await same(
        named('CreateContact'),
        { input: { firstName: 'Http', email: `http-${randomUUID()}@example.com` } },
        anyone(),
      )) as any
    ).data.createContact as { id: string };
    const bodies = [
      { query: MANIFEST.byId, variables: { id } },
      { query: MANIFEST.merged, variables: { search: 'Http' }, operationName: 'Merged' },
      { query: named('Contact'), variables: { id: randomUUID() } },
      { query: named('UpdateContact'), variables: { id, input: { email: 'not an address' } } },
    ];
    for (const body of bodies) {
      for (const accept of [
        undefined,
        'application/graphql-response+json',
        'application/json',
        'text/html;q=0.9, */*;q=0.1',
      ]) {
        const headers = { 'x-request-id': randomUUID(), ...(accept ? { accept } : {}) };
        const answer = await twins.post(body, headers);
        expect({ ...answer, accept }).toEqual({
          short: answer.full,
          full: answer.full,
          sameCalls: true,
          shortPath: true,
          accept,
        });
      }
    }
    // Another operation name, and APQ extensions, are Apollo's to answer.
    const elsewhere = await twins.post(
      { query: MANIFEST.byId, variables: { id }, operationName: 'Other' },
      { 'x-request-id': randomUUID() },
    );
    expect(elsewhere).toEqual(expect.objectContaining({ short: elsewhere.full, shortPath: false }));
  });
});
