import 'reflect-metadata';
import { PassThrough } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { MAX_JSON_NESTING } from '#lib/http/input.js';
import { startTestPlatform, type TestPlatform } from '#test/support/platform.js';
import { rawRequest } from '#test/support/raw-http.js';

/** `[[[…]]]` nested `levels` deep: valid JSON, which JSON.parse reads without recursion. */
const nested = (levels: number) => `${'['.repeat(levels)}${']'.repeat(levels)}`;

const post = (url: string, body: string) =>
  rawRequest(url, { method: 'POST', headers: { 'content-type': 'application/json' }, body });

describe('request bodies of absurd shape or size: a client error on every face, nothing logged as a failure', () => {
  let platform: TestPlatform;
  const logLines: string[] = [];
  let graphqlPorts: [string, string][];

  beforeAll(async () => {
    const logStream = new PassThrough();
    logStream.on('data', (chunk: Buffer) => logLines.push(...chunk.toString().split('\n').filter(Boolean)));
    platform = await startTestPlatform({}, { logStream });
    graphqlPorts = [
      ['gateway', platform.urls.gateway],
      ['social subgraph', platform.subgraphs.social.url],
      ['surveys subgraph', platform.subgraphs.surveys.url],
      ['contacts subgraph', platform.subgraphs.contacts.url],
    ];
  });
  afterAll(async () => {
    await platform?.stop();
  });

  /** Log entries at error level or above (pino: 50), or carrying a stack. */
  const failuresLogged = () =>
    logLines.filter((line) => {
      const entry = JSON.parse(line) as { level?: number; err?: { stack?: string } };
      return (entry.level ?? 0) >= 50 || Boolean(entry.err?.stack);
    });

  it('refuses a deeply nested JSON body with a 400 problem on REST, naming the limit, and writes nothing', async () => {
    const deep = `{"firstName":"Deep","email":"deep@shape.example","tags":${nested(300_000)}}`;
    const answer = await post(`${platform.urls.contactsRest}/api/contacts`, deep);
    expect(answer.status).toBe(400);
    expect(answer.headers['content-type']).toMatch(/^application\/problem\+json/);
    const problem = JSON.parse(answer.body.toString()) as { code: string; errors: unknown[] };
    expect(problem).toMatchObject({
      code: 'BAD_USER_INPUT',
      errors: [{ field: 'body', message: `nests arrays and objects deeper than ${MAX_JSON_NESTING} levels` }],
    });
    const search = await rawRequest(`${platform.urls.contactsRest}/api/contacts?search=deep@shape.example`);
    expect(JSON.parse(search.body.toString())).toMatchObject({ total: 0 });
    // Just under the limit is an ordinary body, refused only for what it says (tags are strings).
    const shallow = await post(
      `${platform.urls.contactsRest}/api/contacts`,
      `{"firstName":"Ok","tags":${nested(MAX_JSON_NESTING - 1)}}`,
    );
    expect(shallow.status).toBe(400);
    expect(shallow.body.toString()).not.toMatch(/levels/);
    expect(failuresLogged()).toEqual([]);
  });

  it('refuses a deeply nested GraphQL request body with a GraphQL-shaped 400 on the gateway and each subgraph port', async () => {
    // Any document: the body is refused for its shape before GraphQL reads it.
    const query = '{ __typename }';
    for (const [face, url] of graphqlPorts) {
      for (const body of [
        `{"query":${JSON.stringify(query)},"variables":{"input":${nested(300_000)}}}`,
        nested(300_000),
      ]) {
        const answer = await post(url, body);
        const errors = (JSON.parse(answer.body.toString()) as { errors?: unknown[] }).errors;
        expect({ face, status: answer.status, errors }).toEqual({
          face,
          status: 400,
          errors: [
            {
              message: expect.stringMatching(/nest/),
              extensions: {
                code: 'BAD_USER_INPUT',
                errors: [{ field: 'body', message: `nests arrays and objects deeper than ${MAX_JSON_NESTING} levels` }],
              },
            },
          ],
        });
      }
    }
    expect(failuresLogged()).toEqual([]);
  });

  it('answers an oversize body with 413, and a too-deep or too-costly query with a 400 code, on every GraphQL port', async () => {
    const oversize = JSON.stringify({ query: '{ __typename }', variables: { pad: 'x'.repeat(1024 * 1024 + 1) } });
    const tooDeep = `{ ${'__type(name: "Query") { fields { type { ofType { '.repeat(3)}name ${'} } } }'.repeat(3)} }`;
    // Cost grows by half for each level: three thousand names eight levels down are over 50,000.
    const tooCostly = `{ __type(name: "Query") { fields { type { fields { type { fields { type { ${'name '.repeat(3000)}} } } } } } } }`;
    for (const [face, url] of graphqlPorts) {
      const big = await post(url, oversize);
      expect({ face, status: big.status, code: codeOf(big.body) }).toEqual({
        face,
        status: 413,
        code: 'PAYLOAD_TOO_LARGE',
      });
      for (const [limit, query] of [
        ['depth', tooDeep],
        ['cost', tooCostly],
      ]) {
        const answer = await post(url, JSON.stringify({ query }));
        expect({ face, limit, status: answer.status, code: codeOf(answer.body) }).toEqual({
          face,
          limit,
          status: 400,
          code: 'GRAPHQL_VALIDATION_FAILED',
        });
      }
    }
    expect(failuresLogged()).toEqual([]);
  });
});

const codeOf = (body: Buffer) =>
  (JSON.parse(body.toString()) as { errors?: { extensions?: { code?: string } }[] }).errors?.[0]?.extensions?.code;
