import 'reflect-metadata';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { LogCollector } from '#test/support/logs.js';
import { graphql, rest, startTestPlatform, type TestPlatform } from '#test/support/platform.js';
import { freePort } from '#test/support/ports.js';

/**
 * Under `npm start` the gateway runs the subgraphs of its own process directly (no loopback HTTP);
 * a `*_SUBGRAPH_URL` sends that subgraph's calls over HTTP instead. Either way the subgraph sees the
 * caller's credentials and request id, and its HTTP server still answers.
 */
describe.each([
  ['in process', false],
  ['over HTTP (CONTACTS_SUBGRAPH_URL)', true],
])('gateway to the contacts subgraph %s', (_how, overHttp) => {
  let platform: TestPlatform;
  const logs = new LogCollector();

  beforeAll(async () => {
    const port = await freePort();
    const env: Record<string, string> = overHttp
      ? {
          CONTACTS_SUBGRAPH_PORT: String(port),
          CONTACTS_SUBGRAPH_URL: `http://127.0.0.1:${port}/graphql`,
          CONTACTS_AUTH: 'required',
        }
      : { CONTACTS_AUTH: 'required' };
    // debug: in process the subgraph's own line is written at debug (lib/subgraph/local-subgraph.ts).
    platform = await startTestPlatform({ LOG_LEVEL: 'debug', ...env }, { logStream: logs });
  });
  afterAll(async () => {
    await platform?.stop();
  });

  /** The contacts subgraph's log lines of one request: what HTTP (pino-http) or the in-process executor wrote. */
  const subgraphLines = (requestId: string) =>
    logs.lines.filter((line) => line.component === 'contacts-subgraph' && line.req?.id === requestId);

  it('carries the credentials and the request id, and says which way it went', async () => {
    const token = await platform.token('local-user');
    const requestId = `local-${overHttp}-${Date.now()}`;
    const created = await rest(
      'POST',
      `${platform.urls.contactsRest}/api/contacts`,
      { firstName: 'Ada' },
      { authorization: `Bearer ${token}`, 'x-request-id': requestId },
    );
    expect(created.status).toBe(201);
    const lines = subgraphLines(requestId);
    expect(lines.map((line) => line.msg)).toEqual([overHttp ? 'request completed' : 'operation completed']);

    const anonymous = await rest('GET', `${platform.urls.contactsRest}/api/contacts`);
    expect(anonymous.status).toBe(401);
    const badToken = await rest('GET', `${platform.urls.contactsRest}/api/contacts`, undefined, {
      authorization: 'Bearer not-a-token',
    });
    expect(badToken.status).toBe(401);
  });

  it('answers errors the same way: bad variables, a missing contact', async () => {
    const token = await platform.token('local-user');
    const headers = { authorization: `Bearer ${token}` };
    const invalid = await graphql<any>(
      platform.urls.gateway,
      'query ($first: Int) { contacts(first: $first) { totalCount } }',
      { first: 1000 },
      headers,
    );
    expect(invalid.body.errors?.[0]?.extensions?.code).toBe('BAD_USER_INPUT');
    const missing = await rest(
      'GET',
      `${platform.urls.contactsRest}/api/contacts/00000000-0000-4000-8000-000000000000`,
      undefined,
      headers,
    );
    expect(missing.status).toBe(404);
  });

  it('leaves the subgraph HTTP server answering', async () => {
    const token = await platform.token('local-user');
    const response = await graphql<any>(
      platform.subgraphs.contacts.url,
      '{ contacts(first: 1) { totalCount } }',
      {},
      { authorization: `Bearer ${token}` },
    );
    expect(response.body.data?.contacts.totalCount).toBeGreaterThanOrEqual(1);
  });
});
