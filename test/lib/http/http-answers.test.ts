import 'reflect-metadata';
import { brotliDecompressSync, gunzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { COMPRESSION_THRESHOLD_BYTES } from '#lib/http/http-answers.js';
import { LogCollector } from '#test/support/logs.js';
import { rest, startTestPlatform, type TestPlatform } from '#test/support/platform.js';
import { corsHeaders, rawRequest } from '#test/support/raw-http.js';

const WEB = 'http://localhost:5173';
const SECOND_WEB = 'https://app.example.com';
const STRANGER = 'http://localhost:6001';
const SAFE_ID = /^[\w.:-]{1,128}$/;
/** What a page sends besides credentials and a body, by the REST conventions: safe retries, conditions, preferences, a stream's resumption. */
const CONVENTION_REQUEST_HEADERS = ['Idempotency-Key', 'If-Match', 'If-None-Match', 'Prefer', 'Last-Event-ID'];
/** Every answer header of the REST conventions a page's script must be able to read. */
const CONVENTION_ANSWER_HEADERS = [
  'ETag',
  'Idempotent-Replayed',
  'Location',
  'Link',
  'RateLimit',
  'RateLimit-Policy',
  'Retry-After',
  'Preference-Applied',
  'WWW-Authenticate',
  'X-Request-Id',
];
const listed = (header: string | string[] | undefined) =>
  String(header ?? '')
    .split(',')
    .map((name) => name.trim().toLowerCase())
    .sort();

describe('what every HTTP answer carries', () => {
  let platform: TestPlatform;
  let bearer: string;
  let contactId: string;
  const logs = new LogCollector();

  beforeAll(async () => {
    platform = await startTestPlatform(
      { LOG_LEVEL: 'info', CORS_ORIGINS: `${WEB},${SECOND_WEB}` },
      { logStream: logs },
    );
    bearer = `Bearer ${await platform.token('user-http')}`;
    const created = await rest('POST', `${platform.urls.contactsRest}/api/contacts`, {
      firstName: 'Ada',
      email: 'ada@example.com',
    });
    contactId = created.body.id;
  });
  afterAll(async () => {
    await platform?.stop();
  });

  const preflight = (url: string, origin: string, method: string, headers = 'authorization,content-type') =>
    rawRequest(url, {
      method: 'OPTIONS',
      headers: { origin, 'access-control-request-method': method, 'access-control-request-headers': headers },
    });

  describe('CORS', () => {
    it('answers a preflight from an allowed origin with the methods of that route, the contract headers and credentials', async () => {
      const cases: Array<[string, string, string]> = [
        [`${platform.urls.contactsRest}/api/contacts/${contactId}`, 'PUT', 'GET,HEAD,PUT,DELETE'],
        [`${platform.urls.contactsRest}/api/contacts/export`, 'GET', 'GET,HEAD'],
        [`${platform.urls.socialRest}/api/posts`, 'POST', 'GET,HEAD,POST'],
        [`${platform.urls.surveysRest}/api/auth/magic/verify`, 'POST', 'POST'],
        [`${platform.urls.surveysRest}/storage/any-signed-token`, 'PUT', 'GET,HEAD,PUT'],
        [platform.urls.gateway, 'POST', 'GET,POST'],
      ];
      for (const [url, method, methods] of cases) {
        for (const origin of [WEB, SECOND_WEB]) {
          const answer = await preflight(url, origin, method);
          expect({ url, status: answer.status }).toEqual({ url, status: 204 });
          expect(corsHeaders(answer)).toMatchObject({
            'access-control-allow-origin': origin,
            'access-control-allow-credentials': 'true',
            'access-control-allow-methods': methods,
            'access-control-max-age': '600',
          });
          expect(answer.headers['access-control-allow-headers']).toEqual(
            expect.stringContaining('Authorization,Content-Type,X-API-Key,X-Request-Id'),
          );
          expect(answer.headers.vary).toMatch(/Origin/);
        }
        // A page may send a safe retry, a conditional request, a preference and a stream's last event id.
        const conventions = await preflight(url, WEB, method, CONVENTION_REQUEST_HEADERS.join(',').toLowerCase());
        expect({ url, status: conventions.status }).toEqual({ url, status: 204 });
        expect(listed(conventions.headers['access-control-allow-headers'])).toEqual(
          expect.arrayContaining(CONVENTION_REQUEST_HEADERS.map((name) => name.toLowerCase())),
        );
      }
      const gatewayGet = await preflight(platform.urls.gateway, WEB, 'GET', 'apollo-require-preflight');
      expect(gatewayGet.headers['access-control-allow-headers']).toMatch(/Apollo-Require-Preflight/);
    });

    it('lets an allowed page read answers and problems, with every answer header of the REST conventions exposed', async () => {
      const reads = [
        rawRequest(`${platform.urls.contactsRest}/api/contacts`, { headers: { origin: WEB } }),
        rawRequest(`${platform.urls.contactsRest}/api/contacts/00000000-0000-4000-8000-000000000000`, {
          headers: { origin: WEB },
        }),
        rawRequest(`${platform.urls.contactsRest}/api/contacts`, { method: 'PATCH', headers: { origin: WEB } }),
        rawRequest(`${platform.urls.socialRest}/api/posts`, { headers: { origin: WEB, authorization: bearer } }),
        rawRequest(`${platform.urls.surveysRest}/api/auth/session`, { headers: { origin: WEB } }),
        rawRequest(platform.urls.gateway, {
          method: 'POST',
          headers: { origin: WEB, 'content-type': 'application/json' },
          body: JSON.stringify({ query: '{ contacts(first: 1) { totalCount } }' }),
        }),
      ];
      const statuses = [];
      for (const answer of await Promise.all(reads)) {
        statuses.push(answer.status);
        const { 'access-control-expose-headers': exposed, ...others } = corsHeaders(answer);
        expect(others).toEqual({ 'access-control-allow-origin': WEB, 'access-control-allow-credentials': 'true' });
        expect(listed(exposed)).toEqual(listed(CONVENTION_ANSWER_HEADERS.join(',')));
      }
      expect(statuses).toEqual([200, 404, 405, 200, 401, 200]);
    });

    it('gives no CORS header to any other origin, nor to a request without Origin', async () => {
      const answers = [
        await preflight(`${platform.urls.contactsRest}/api/contacts`, STRANGER, 'POST'),
        await preflight(`${platform.urls.socialRest}/api/posts`, 'null', 'POST'),
        await preflight(platform.urls.gateway, STRANGER, 'POST'),
        await preflight(`${platform.urls.surveysRest}/storage/any-signed-token`, STRANGER, 'PUT'),
        await rawRequest(`${platform.urls.contactsRest}/api/contacts`, { headers: { origin: STRANGER } }),
        await rawRequest(`${platform.urls.contactsRest}/api/contacts`, { headers: { origin: `${WEB}.evil.example` } }),
        await rawRequest(`${platform.urls.contactsRest}/api/contacts`),
        await rawRequest(platform.urls.gateway, {
          method: 'POST',
          headers: { origin: STRANGER, 'content-type': 'application/json' },
          body: JSON.stringify({ query: '{ contacts(first: 1) { totalCount } }' }),
        }),
      ];
      for (const answer of answers) {
        expect(corsHeaders(answer)).toEqual({});
        expect(answer.status).not.toBe(204);
      }
    });
  });

  describe('request ids', () => {
    it('puts the id it was given on every answer: probes, preflights, 404s, 405s, problems, GraphQL, explorers', async () => {
      const requests: Array<[string, Parameters<typeof rawRequest>[1]]> = [
        [`${platform.urls.contactsRest}/healthz`, {}],
        [`${platform.urls.contactsRest}/readyz`, {}],
        [`${platform.urls.contactsRest}/health`, {}],
        [`${platform.urls.contactsRest}/api`, {}],
        [`${platform.urls.contactsRest}/no/such/path`, {}],
        [`${platform.urls.contactsRest}/api/contacts`, { method: 'PATCH' }],
        [
          `${platform.urls.contactsRest}/api/contacts`,
          { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"firstName": ' },
        ],
        [
          `${platform.urls.contactsRest}/api/contacts`,
          { method: 'OPTIONS', headers: { origin: WEB, 'access-control-request-method': 'POST' } },
        ],
        [`${platform.urls.socialRest}/health`, {}],
        [`${platform.urls.socialRest}/api/posts`, {}],
        [`${platform.urls.surveysRest}/api/surveys`, {}],
        [
          platform.urls.gateway,
          { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"query": "{ __typename }"}' },
        ],
        [platform.urls.gateway, { headers: { accept: 'text/html' } }],
        [platform.urls.gateway.replace('/graphql', '/graphiql'), {}],
        [platform.urls.gateway.replace('/graphql', '/healthz'), {}],
        [
          platform.subgraphs.contacts.url,
          { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"query": "{ __typename }"}' },
        ],
        [platform.subgraphs.contacts.url.replace('/graphql', '/readyz'), {}],
      ];
      for (const [index, [url, options]] of requests.entries()) {
        const id = `given-${index}-${Date.now()}`;
        const answer = await rawRequest(url, { ...options, headers: { ...options?.headers, 'x-request-id': id } });
        expect({ url, method: options?.method ?? 'GET', id: answer.headers['x-request-id'] }).toEqual({
          url,
          method: options?.method ?? 'GET',
          id,
        });
      }
    });

    it('makes an id when none (or an unsafe one) is given, and that same id is logged and sent on through the gateway', async () => {
      const answer = await rawRequest(`${platform.urls.contactsRest}/api/contacts`);
      const made = String(answer.headers['x-request-id']);
      expect(made).toMatch(SAFE_ID);
      const components = logs.lines
        .filter((line) => line.req?.id === made || line.requestId === made)
        .map((line) => line.component);
      expect(components).toEqual(expect.arrayContaining(['contacts-rest', 'gateway']));

      const unsafe = await rawRequest(`${platform.urls.contactsRest}/api/contacts`, {
        headers: { 'x-request-id': 'no spaces <allowed>' },
      });
      expect(unsafe.headers['x-request-id']).toMatch(SAFE_ID);
      expect(unsafe.headers['x-request-id']).not.toBe('no spaces <allowed>');

      const problem = await rawRequest(`${platform.urls.contactsRest}/api/contacts`, { method: 'PATCH' });
      expect(problem.headers['x-request-id']).toMatch(SAFE_ID);
    });
  });

  describe('caching', () => {
    it('keeps personal data out of every cache, with an ETag that still answers 304', async () => {
      // A list's ETag is Express's weak one, of its body; one versioned resource's is its strong version.
      const weak = /^W\/"/;
      const personal: Array<[string, Record<string, string>, RegExp]> = [
        [`${platform.urls.contactsRest}/api/contacts`, {}, weak],
        [`${platform.urls.contactsRest}/api/contacts/${contactId}`, {}, /^"\d+"$/],
        [`${platform.urls.contactsRest}/api/contacts/${contactId}/notes`, {}, weak],
        [`${platform.urls.socialRest}/api/posts`, { authorization: bearer }, weak],
        [`${platform.urls.socialRest}/api/brands`, { authorization: bearer }, weak],
      ];
      for (const [url, headers, tag] of personal) {
        const first = await rawRequest(url, { headers });
        expect({ url, status: first.status, cacheControl: first.headers['cache-control'] }).toEqual({
          url,
          status: 200,
          cacheControl: 'private, no-store',
        });
        const etag = String(first.headers.etag);
        expect(etag).toMatch(tag);
        const again = await rawRequest(url, { headers: { ...headers, 'if-none-match': etag } });
        expect(again.status).toBe(304);
        expect(again.body.length).toBe(0);
      }
    });

    it('lets shared and public resources be kept as long as fits them', async () => {
      const expected: Array<[string, string]> = [
        [`${platform.urls.contactsRest}/api`, 'public, max-age=300'],
        [`${platform.urls.socialRest}/api`, 'public, max-age=300'],
        [`${platform.urls.contactsRest}/health`, 'no-store'],
        [`${platform.urls.socialRest}/health`, 'no-store'],
        [`${platform.urls.surveysRest}/health`, 'no-store'],
        [`${platform.urls.contactsRest}/api/pipeline`, 'private, no-cache'],
      ];
      for (const [url, cacheControl] of expected) {
        const answer = await rawRequest(url);
        expect({ url, cacheControl: answer.headers['cache-control'] }).toEqual({ url, cacheControl });
      }
      const session = await rawRequest(`${platform.urls.surveysRest}/api/auth/session`);
      expect(session.headers['cache-control']).toBe('private, no-store');
    });
  });

  describe('compression', () => {
    it('compresses with gzip or br as the client accepts, above the threshold only', async () => {
      const url = `${platform.urls.socialRest}/api`;
      const plain = await rawRequest(url);
      expect(plain.headers['content-encoding']).toBeUndefined();
      expect(plain.body.length).toBeGreaterThan(COMPRESSION_THRESHOLD_BYTES);
      expect(plain.headers.vary).toMatch(/Accept-Encoding/);

      const gzip = await rawRequest(url, { headers: { 'accept-encoding': 'gzip' } });
      expect(gzip.headers['content-encoding']).toBe('gzip');
      expect(gunzipSync(gzip.body).equals(plain.body)).toBe(true);
      expect(gzip.body.length).toBeLessThan(plain.body.length);
      // The weak ETag names the content, whichever encoding carries it.
      expect(gzip.headers.etag).toBe(plain.headers.etag);

      const br = await rawRequest(url, { headers: { 'accept-encoding': 'br' } });
      expect(br.headers['content-encoding']).toBe('br');
      expect(brotliDecompressSync(br.body).equals(plain.body)).toBe(true);

      const small = await rawRequest(`${platform.urls.socialRest}/healthz`, {
        headers: { 'accept-encoding': 'gzip, br' },
      });
      expect(small.body.length).toBeLessThan(COMPRESSION_THRESHOLD_BYTES);
      expect(small.headers['content-encoding']).toBeUndefined();
    });

    it('compresses GraphQL answers of the gateway', async () => {
      const answer = await rawRequest(platform.urls.gateway, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'accept-encoding': 'gzip' },
        body: JSON.stringify({ query: '{ __schema { types { name description } } }' }),
      });
      expect(answer.headers['content-encoding']).toBe('gzip');
      expect(JSON.parse(gunzipSync(answer.body).toString()).data.__schema.types.length).toBeGreaterThan(50);
    });
  });
});
