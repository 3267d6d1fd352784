import 'reflect-metadata';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { auditServer } from 'graphql-http';
import { LogCollector } from '#test/support/logs.js';
import { graphql, rest, startTestPlatform, type TestPlatform } from '#test/support/platform.js';

describe('gateway', () => {
  let platform: TestPlatform;
  let gateway: string;
  const logs = new LogCollector();

  beforeAll(async () => {
    // debug: the in-process subgraph writes its line at debug (lib/subgraph/local-subgraph.ts).
    platform = await startTestPlatform({ LOG_LEVEL: 'debug' }, { logStream: logs });
    gateway = platform.urls.gateway;
  });
  afterAll(async () => {
    await platform?.stop();
  });

  it('passes every MUST audit of the GraphQL-over-HTTP spec (graphql-http)', async () => {
    const results = await auditServer({ url: gateway, fetchFn: fetch });
    const mustFailures = results.filter((result) => result.name.startsWith('MUST') && result.status !== 'ok');
    expect(mustFailures.map((failure) => `${failure.name}: ${'reason' in failure ? failure.reason : ''}`)).toEqual([]);
    expect(results.length).toBeGreaterThan(30);
  });

  it('composes all three subgraphs into one API', async () => {
    const { body } = await graphql<any>(gateway, '{ __schema { queryType { fields { name } } } }');
    const fields = body.data!.__schema.queryType.fields.map((field: { name: string }) => field.name);
    expect(fields).toEqual(expect.arrayContaining(['contact', 'contacts', 'viewer', 'surveyExportFormats']));
  });

  it('serves contacts as a cursor connection', async () => {
    for (const firstName of ['Ann', 'Bob', 'Cid']) {
      await graphql(gateway, 'mutation ($input: CreateContactInput!) { createContact(input: $input) { id } }', {
        input: { firstName },
      });
    }
    const first = await graphql<any>(
      gateway,
      '{ contacts(first: 2) { totalCount edges { cursor node { firstName } } pageInfo { hasNextPage endCursor } } }',
    );
    const page = first.body.data!.contacts;
    expect(page.edges).toHaveLength(2);
    expect(page.pageInfo.hasNextPage).toBe(true);
    const next = await graphql<any>(
      gateway,
      'query ($after: String) { contacts(first: 2, after: $after) { nodes { firstName } pageInfo { hasNextPage } } }',
      {
        after: page.pageInfo.endCursor,
      },
    );
    expect(next.body.data!.contacts.nodes.length).toBe(page.totalCount - 2);
  });

  it('forwards the bearer credential to the subgraphs', async () => {
    const anonymous = await graphql(gateway, '{ viewer { userId } }');
    expect(anonymous.body.errors?.[0].extensions?.code).toBe('UNAUTHENTICATED');
    const token = await platform.token('user-42', ['posts.read'], 'u42@example.com');
    const signedIn = await graphql<any>(
      gateway,
      '{ viewer { userId email scopes via } }',
      {},
      { authorization: `Bearer ${token}` },
    );
    expect(signedIn.body.data!.viewer).toEqual({
      userId: 'user-42',
      email: 'u42@example.com',
      scopes: ['posts.read'],
      via: 'bearer',
    });
  });

  it('carries one request id from the REST adapter through the gateway to the subgraph', async () => {
    const requestId = `trace-${Date.now()}`;
    const res = await rest('GET', `${platform.urls.contactsRest}/api/contacts`, undefined, {
      'x-request-id': requestId,
    });
    expect(res.status).toBe(200);
    expect(res.headers.get('x-request-id')).toBe(requestId);
    const components = logs.lines.filter((line) => line.req?.id === requestId).map((line) => line.component);
    expect(components).toEqual(expect.arrayContaining(['contacts-rest', 'contacts-subgraph']));
  });

  it('rejects queries deeper or costlier than the configured limits', async () => {
    const strict = await startTestPlatform({ GRAPHQL_MAX_DEPTH: '3', GRAPHQL_MAX_COST: '40' });
    try {
      const shallow = await graphql(strict.urls.gateway, '{ contacts { totalCount } }');
      expect(shallow.body.errors).toBeUndefined();
      const deep = await graphql(strict.urls.gateway, '{ contacts { edges { node { id } } } }');
      expect(deep.body.errors?.[0].message).toMatch(/depth/i);
      const wide = `{ contactPage { items { ${'id firstName lastName email phone company tags createdAt updatedAt '.repeat(3)} } } }`;
      const costly = await graphql(strict.urls.gateway, wide);
      expect(costly.body.errors?.[0].message).toMatch(/cost/i);
    } finally {
      await strict.stop();
    }
  });

  it('answers malformed JSON and oversized bodies without a stack trace', async () => {
    const malformed = await fetch(gateway, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: '{"query": ',
    });
    expect(malformed.status).toBe(400);
    const big = await fetch(gateway, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ query: `{ contacts { totalCount } } # ${'x'.repeat(2 * 1024 * 1024)}` }),
    });
    expect(big.status).toBe(413);
    const subgraph = await fetch(platform.subgraphs.contacts.url, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: '{"query": ',
    });
    expect(subgraph.status).toBe(400);
    expect(subgraph.headers.get('content-type')).toContain('application/json');
    for (const text of [await malformed.text(), await big.text(), await subgraph.text()])
      expect(text).not.toMatch(/at .*\.(js|ts):\d+/);
  });

  it('serves Apollo Sandbox on GET in development and probes', async () => {
    const page = await fetch(gateway, { headers: { accept: 'text/html' } });
    expect(page.status).toBe(200);
    expect(await page.text()).toMatch(/sandbox/i);
    expect((await fetch(gateway.replace('/graphql', '/healthz'))).status).toBe(200);
    expect((await fetch(gateway.replace('/graphql', '/readyz'))).status).toBe(200);
  });

  it('answers /health on every REST port', async () => {
    for (const base of [platform.urls.socialRest, platform.urls.surveysRest, platform.urls.contactsRest]) {
      const res = await rest('GET', `${base}/health`);
      expect(res.status).toBe(200);
      expect(res.body.status).toBe('ok');
    }
  });
});

describe('ForwardingDataSource', () => {
  it('passes a subgraph 4xx error on with its code instead of a bare status line', async () => {
    const { ForwardingDataSource } = await import('#gateway/forwarding-data-source.js');
    const source = new ForwardingDataSource({ url: 'http://127.0.0.1:1/graphql' });
    const badInput = new Response(
      JSON.stringify({
        errors: [{ message: 'Variable "$at" got invalid value "soon"', extensions: { code: 'BAD_USER_INPUT' } }],
      }),
      {
        status: 400,
        headers: { 'content-type': 'application/json' },
      },
    );
    const error = await source.errorFromResponse(badInput);
    expect(error.message).toContain('$at');
    expect(error.extensions.code).toBe('BAD_USER_INPUT');
    const crash = await source.errorFromResponse(new Response('boom', { status: 502 }));
    expect(crash.message).toMatch(/^502:/);
    expect(crash.extensions.code).toBeUndefined();
  });
});
