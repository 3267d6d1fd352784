import 'reflect-metadata';
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { Validator } from '@seriousme/openapi-schema-validator';
import { Ajv2020 } from 'ajv/dist/2020.js';
import { loadConfig } from '#lib/config.js';
import { httpClient } from '#lib/rest/graphql-client.js';
import { openApiDocument } from '#lib/rest/openapi.js';
import type { ApiDescription, DocumentedRoute } from '#lib/rest/route-doc.js';
import { PROJECT_ROOT } from '#lib/paths.js';
import { contactsOpenApi } from '#rest-adapters/contacts/index.js';
import { openApiDocuments, openApiText } from '#scripts/codegen/openapi.js';
import { rest, startTestPlatform, type TestPlatform } from '#test/support/platform.js';

type Document = Record<string, any> & { openapi: string; info: any };
const SERVICES = ['social', 'surveys', 'contacts'] as const;
const METHODS = ['get', 'put', 'post', 'patch', 'delete'];

const checkedIn = (service: string): Document =>
  JSON.parse(readFileSync(path.join(PROJECT_ROOT, 'schema', 'openapi', `${service}.json`), 'utf8'));

/** `METHOD /path` of every operation of a document. */
function operationsOf(document: Document): string[] {
  return Object.entries(document.paths as Record<string, Record<string, unknown>>)
    .flatMap(([route, item]) =>
      Object.keys(item)
        .filter((key) => METHODS.includes(key))
        .map((method) => `${method.toUpperCase()} ${route}`),
    )
    .sort();
}

/**
 * Checks a real answer against the document: its status is one the operation declares, its media
 * type is one declared for that status, and its body validates against that schema (JSON Schema
 * 2020-12, which OpenAPI 3.1 schemas are). Answers the validation errors (none: it conforms).
 */
function conformance(
  document: Document,
  method: string,
  template: string,
  answer: { status: number; headers: Headers; body: unknown },
): unknown[] {
  const operation = document.paths[template]?.[method.toLowerCase()];
  if (!operation) return [`${method} ${template} is not in the document`];
  const response = operation.responses[String(answer.status)];
  if (!response) return [`${method} ${template} does not declare ${answer.status}`];
  const type = (answer.headers.get('content-type') ?? '').split(';')[0].trim();
  if (!response.content?.[type]) return [`${answer.status} of ${method} ${template} does not declare ${type}`];
  const ajv = new Ajv2020({ strict: false, validateFormats: false, allErrors: true });
  ajv.addSchema({ ...document, $id: 'openapi.json' });
  const pointer = [
    'paths',
    template,
    method.toLowerCase(),
    'responses',
    String(answer.status),
    'content',
    type,
    'schema',
  ]
    .map((part) => part.replace(/~/g, '~0').replace(/\//g, '~1'))
    .join('/');
  const validate = ajv.compile({ $ref: `openapi.json#/${pointer}` });
  return validate(answer.body) ? [] : (validate.errors ?? []);
}

describe('OpenAPI documents of the REST services', () => {
  let made: Record<string, Document>;
  beforeAll(async () => {
    made = await openApiDocuments();
  });

  it.each(SERVICES)(
    '%s: the checked-in document is what the route table makes (run `npm run schema` after changing a route)',
    (service) => {
      expect(openApiText(made[service])).toBe(`${JSON.stringify(checkedIn(service), null, 2)}\n`);
    },
  );

  it.each(SERVICES)('%s: the document is valid OpenAPI 3.1', async (service) => {
    const validator = new Validator();
    const result = await validator.validate(made[service]);
    expect(result.errors ?? []).toEqual([]);
    expect(result.valid).toBe(true);
    expect(validator.version).toBe('3.1');
  });

  it('the validator finds what is wrong (the check above can fail)', async () => {
    const broken = structuredClone(made.contacts);
    broken.paths['/api/contacts'].get.parameters[0].in = 'body';
    expect((await new Validator().validate(broken)).valid).toBe(false);
  });

  it.each(SERVICES)(
    '%s: every operation has its own readable operationId and one tag the document declares and describes',
    (service) => {
      const document = made[service];
      const operations = Object.values(document.paths as Record<string, Record<string, any>>).flatMap((item) =>
        Object.entries(item)
          .filter(([key]) => METHODS.includes(key))
          .map(([, operation]) => operation),
      );
      const ids = operations.map((operation) => operation.operationId);
      expect(ids.every((id) => /^[a-z][A-Za-z]+$/.test(id))).toBe(true);
      expect(new Set(ids).size).toBe(ids.length);
      const declared = new Map((document.tags as { name: string; description: string }[]).map((t) => [t.name, t]));
      for (const operation of operations) {
        expect(operation.tags).toHaveLength(1);
        expect(declared.get(operation.tags[0])?.description).toMatch(/\w{3}/);
      }
      // Each declared tag holds operations: one per resource, none left empty.
      expect(new Set(operations.map((operation) => operation.tags[0]))).toEqual(new Set(declared.keys()));
    },
  );

  it('names operations and resources as a client developer reads them', () => {
    const id = (service: string, method: string, route: string) => made[service].paths[route][method].operationId;
    expect(id('contacts', 'get', '/api/contacts')).toBe('listContacts');
    expect(id('contacts', 'get', '/api/contacts/{id}')).toBe('getContact');
    expect(id('contacts', 'post', '/api/contacts/{id}/notes')).toBe('createNote');
    expect(id('contacts', 'get', '/api/contacts/{contactId}/notes/{noteId}')).toBe('getNote');
    expect(id('social', 'post', '/api/content-ops/items/{contentId}/retry')).toBe('retryContentItem');
    expect(id('surveys', 'post', '/api/surveys/{id}/submit')).toBe('submitSurvey');
    expect(id('social', 'get', '/healthz')).toBe('getLiveness');
    expect(made.contacts.paths['/api/contacts/{contactId}/notes/{noteId}'].get.tags).toEqual(['notes']);
    expect(made.surveys.paths['/api/assets/{assetId}'].get.tags).toEqual(['assets']);
    expect(made.social.paths['/api'].get.tags).toEqual(['service']);
  });

  it.each([
    ['social', 3001],
    ['surveys', 3002],
    ['contacts', 3003],
  ])(
    '%s: the servers are the address the document is read from, then the local default (localhost:%d) as a template',
    (service, port) => {
      const [here, server, ...others] = made[service].servers;
      // The reference page tries requests out on the first server: the service that served it, wherever that is.
      expect(here.url).toBe('/');
      expect(others).toEqual([]);
      expect(server.url).toBe('http://{host}:{port}');
      expect(server.variables).toEqual({
        host: expect.objectContaining({ default: 'localhost' }),
        port: expect.objectContaining({ default: String(port), description: expect.stringContaining('_REST_PORT') }),
      });
      expect(server.description).toMatch(/deployment serves the service at its own address/);
      const config = loadConfig({ DATA_DIR: path.join(PROJECT_ROOT, '.data') });
      expect(config.ports[`${service}Rest` as 'socialRest']).toBe(port);
    },
  );

  it('refuses a route table with an operationId twice, or a tag its service does not declare', () => {
    const api: ApiDescription = {
      title: 'T',
      description: 'D',
      localPort: { port: 1, variable: 'P' },
      tags: { things: 'Things' },
    };
    const route = (operationId: string, routePath: string, tag = 'things'): DocumentedRoute => ({
      method: 'get',
      path: routePath,
      summary: 'S',
      doc: { operationId, tag, answer: { status: 200, description: 'OK' } },
    });
    expect(() => openApiDocument(api, [route('listThings', '/a'), route('getThing', '/a/:id')])).not.toThrow();
    expect(() => openApiDocument(api, [route('listThings', '/a'), route('listThings', '/b')])).toThrow(
      'operationId listThings of GET /b is already that of GET /a',
    );
    expect(() => openApiDocument(api, [route('getLiveness', '/a')])).toThrow(/getLiveness of GET \/healthz/);
    expect(() => openApiDocument(api, [route('listThings', '/a', 'stuff')])).toThrow(
      'tag stuff of GET /a is not one the service declares',
    );
  });

  it('Redocly (recommended rules, offline) finds no error and no warning in the checked-in documents', () => {
    const lint = spawnSync(process.execPath, [path.join(PROJECT_ROOT, 'scripts', 'lint-openapi.mjs')], {
      cwd: PROJECT_ROOT,
      encoding: 'utf8',
    });
    expect(lint.stdout).toMatch(/contacts\.json: 0 errors, 0 warnings/);
    expect({ status: lint.status, output: lint.stdout + lint.stderr }).toEqual({
      status: 0,
      output: expect.any(String),
    });
  });

  it('describes the credentials of each service', () => {
    const security = (service: string, method: string, route: string) => made[service].paths[route][method].security;
    expect(Object.keys(made.social.components.securitySchemes).sort()).toEqual(['ApiKeyAuth', 'BearerAuth']);
    expect(made.social.components.securitySchemes.ApiKeyAuth).toMatchObject({
      type: 'apiKey',
      in: 'header',
      name: 'X-API-Key',
    });
    expect(security('social', 'get', '/api/posts')).toEqual([{ BearerAuth: [] }]);
    expect(security('social', 'get', '/api/content-ops/queue')).toEqual([{ BearerAuth: [] }, { ApiKeyAuth: [] }]);
    expect(security('social', 'get', '/health')).toEqual([]);
    expect(security('social', 'get', '/api/integrations/{platform}/callback')).toEqual([]);
    expect(security('social', 'post', '/api/review/{token}/approve')).toEqual([]);
    expect(made.surveys.components.securitySchemes.SessionCookie).toMatchObject({
      type: 'apiKey',
      in: 'cookie',
      name: 'survey_session',
    });
    expect(security('surveys', 'get', '/api/surveys')).toEqual([{ SessionCookie: [] }, { SessionBearer: [] }]);
    // One sign-in: the bearer may also be the identity service's token naming the surveyor.
    expect(made.surveys.components.securitySchemes.SessionBearer.description).toMatch(/identity service.*email claim/);
    expect(security('surveys', 'post', '/api/auth/magic/request')).toEqual([]);
    expect(security('contacts', 'get', '/api/contacts')).toEqual([]);
    const responses = (service: string, method: string, route: string) =>
      Object.keys(made[service].paths[route][method].responses);
    expect(responses('social', 'post', '/api/ai/generate-image')).toEqual(
      expect.arrayContaining(['200', '400', '401', '403', '413', '415', '429', '503']),
    );
    expect(responses('surveys', 'post', '/api/surveys/{id}/submit')).toEqual(
      expect.arrayContaining(['200', '401', '404', '409']),
    );
    expect(responses('contacts', 'post', '/api/contacts/{id}/attachments')).toEqual(
      expect.arrayContaining(['201', '400', '404', '413', '500']),
    );
    expect(responses('contacts', 'get', '/api/contacts')).not.toContain('401');

    const required = contactsOpenApi(
      loadConfig({ DATA_DIR: path.join(PROJECT_ROOT, '.data'), CONTACTS_AUTH: 'required' }),
      httpClient('http://127.0.0.1:1/graphql'),
    );
    expect(required.components?.securitySchemes).toEqual({
      BearerAuth: expect.objectContaining({ type: 'http', scheme: 'bearer' }),
    });
    expect(required.paths?.['/api/contacts']?.get?.security).toEqual([{ BearerAuth: [] }]);
    expect(required.paths?.['/api']?.get?.security).toEqual([]);
    expect(Object.keys(required.paths?.['/api/contacts']?.get?.responses ?? {})).toEqual(
      expect.arrayContaining(['401', '403']),
    );
  });

  it.each(SERVICES)(
    '%s: documents Location on every 201, Link on every page list, WWW-Authenticate on 401 and the rate-limit headers',
    (service) => {
      const missing: string[] = [];
      const rateLimited: string[] = [];
      for (const [route, item] of Object.entries(made[service].paths as Record<string, Record<string, any>>)) {
        for (const [method, operation] of Object.entries(item)) {
          const where = `${method.toUpperCase()} ${route}`;
          const responses = operation.responses as Record<string, { headers?: Record<string, unknown>; content?: any }>;
          const needs = (status: string, header: string) => {
            if (responses[status] && !responses[status].headers?.[header]) missing.push(`${where} ${status} ${header}`);
          };
          needs('201', 'Location');
          needs('401', 'WWW-Authenticate');
          for (const header of ['Retry-After', 'RateLimit-Policy', 'RateLimit']) needs('429', header);
          const answer = JSON.stringify(responses['200']?.content?.['application/json']?.schema ?? {});
          if (/Page"\}?$/.test(answer) || answer.includes('"nextCursor"')) needs('200', 'Link');
          if (responses['429']) {
            rateLimited.push(where);
            for (const status of Object.keys(responses).filter((key) => key.startsWith('2'))) {
              needs(status, 'RateLimit-Policy');
              needs(status, 'RateLimit');
            }
          }
        }
      }
      expect(missing).toEqual([]);
      expect(rateLimited.sort()).toEqual(
        {
          social: [
            'GET /api/review/{token}',
            'POST /api/ai/generate-image',
            'POST /api/review/{token}/approve',
            'POST /api/review/{token}/reject',
          ],
          surveys: ['POST /api/auth/magic/request'],
          contacts: [],
        }[service],
      );
    },
  );

  it('describes bodies with the field names of the REST contract, JSON and multipart', () => {
    const schemas = (service: string) => made[service].components.schemas;
    expect(Object.keys(schemas('contacts').Contact.properties)).toEqual([
      'id',
      'firstName',
      'lastName',
      'email',
      'phone',
      'company',
      'tags',
      'deleted',
      'mergedInto',
      'createdAt',
      'updatedAt',
    ]);
    expect(schemas('contacts').ContactPage.required).toEqual(['data', 'page', 'limit', 'total']);
    expect(
      made.contacts.paths['/api/contacts/import'].post.requestBody.content['multipart/form-data'].schema.properties,
    ).toHaveProperty('mapping');
    expect(schemas('social').Post.properties).toHaveProperty('scheduledAt');
    expect(schemas('social').PostInput.additionalProperties).toBe(false);
    expect(schemas('surveys').AssetUpload.required).toEqual(
      expect.arrayContaining(['assetId', 'uploadUrl', 'method', 'headers', 'expiresAt']),
    );
    const limit = made.contacts.paths['/api/contacts'].get.parameters.find((p: { name: string }) => p.name === 'limit');
    expect(limit).toMatchObject({ in: 'query', schema: { type: 'integer', minimum: 1, maximum: 100 } });
  });
});

describe('OpenAPI and API reference served by the running services', () => {
  let platform: TestPlatform;
  let bases: Record<(typeof SERVICES)[number], string>;
  let token: string;

  beforeAll(async () => {
    platform = await startTestPlatform();
    bases = {
      social: platform.urls.socialRest,
      surveys: platform.urls.surveysRest,
      contacts: platform.urls.contactsRest,
    };
    token = await platform.token('openapi-user', undefined, 'openapi@example.com');
  });
  afterAll(async () => {
    await platform?.stop();
  });

  it.each(SERVICES)(
    '%s: GET /openapi.json is the checked-in document, and holds every route of the adapter and nothing else',
    async (service) => {
      const res = await rest('GET', `${bases[service]}/openapi.json`);
      expect(res.status).toBe(200);
      expect(res.body).toEqual(checkedIn(service));
      // `GET /api` lists the live route table; the probes are served beside it on every service.
      const api = await rest('GET', `${bases[service]}/api`);
      const table = (api.body.endpoints as { method: string; path: string }[]).map(
        ({ method, path: route }) => `${method} ${route}`,
      );
      expect(operationsOf(res.body)).toEqual([...table, 'GET /healthz', 'GET /readyz'].sort());
      expect(api.body).toMatchObject({ openapi: '/openapi.json', docs: '/docs' });
    },
  );

  it.each(SERVICES)(
    '%s: GET /docs is an API reference whose every script and style the service serves itself',
    async (service) => {
      const res = await fetch(`${bases[service]}/docs`);
      expect(res.status).toBe(200);
      expect(res.headers.get('content-type')).toContain('text/html');
      const csp = res.headers.get('content-security-policy') ?? '';
      expect(csp).toContain("script-src 'self'");
      expect(csp).not.toMatch(/https?:/);
      const html = await res.text();
      const assets = [...html.matchAll(/(?:src|href)="([^"]+)"/g)]
        .map((match) => match[1])
        .filter((url) => url.startsWith('/docs/'));
      expect(assets.length).toBeGreaterThanOrEqual(3);
      expect(html).not.toMatch(/(?:src|href)="(?:https?:)?\/\//);
      for (const asset of assets) {
        const file = await fetch(`${bases[service]}${asset}`);
        expect({ asset, status: file.status }).toEqual({ asset, status: 200 });
        expect(file.headers.get('content-type')).toMatch(/javascript|css/);
        const text = await file.text();
        if (asset.endsWith('start.js')) expect(text).toContain('validatorUrl: null');
      }
    },
  );

  it('real answers conform to the documents: a 201, a 400 problem, a 404 problem, a list', async () => {
    const contacts = checkedIn('contacts');
    const created = await rest('POST', `${bases.contacts}/api/contacts`, {
      firstName: 'Open',
      email: 'open@api.example',
      tags: ['x'],
    });
    expect(created.status).toBe(201);
    expect(conformance(contacts, 'POST', '/api/contacts', created)).toEqual([]);

    const bad = await rest('POST', `${bases.contacts}/api/contacts`, { firstName: 42 });
    expect(bad.status).toBe(400);
    expect(conformance(contacts, 'POST', '/api/contacts', bad)).toEqual([]);

    const missing = await rest('GET', `${bases.contacts}/api/contacts/00000000-0000-4000-8000-000000000000`);
    expect(missing.status).toBe(404);
    expect(conformance(contacts, 'GET', '/api/contacts/{id}', missing)).toEqual([]);

    const list = await rest('GET', `${bases.contacts}/api/contacts?limit=5`);
    expect(conformance(contacts, 'GET', '/api/contacts', list)).toEqual([]);

    const social = checkedIn('social');
    const auth = { authorization: `Bearer ${token}` };
    const post = await rest(
      'POST',
      `${bases.social}/api/posts`,
      { content: 'documented', scheduledAt: '2031-01-01T10:00:00Z' },
      auth,
    );
    expect(post.status).toBe(201);
    expect(conformance(social, 'POST', '/api/posts', post)).toEqual([]);
    const item = await rest('GET', `${bases.social}/api/content-ops/items/${post.body.id}`, undefined, auth);
    expect(conformance(social, 'GET', '/api/content-ops/items/{contentId}', item)).toEqual([]);
    const unauthenticated = await rest('GET', `${bases.social}/api/posts`);
    expect(unauthenticated.status).toBe(401);
    expect(conformance(social, 'GET', '/api/posts', unauthenticated)).toEqual([]);

    // The paging check runs before every route of a table, /api included, which documents the 400.
    const badPage = await rest('GET', `${bases.contacts}/api?limit=0`);
    expect([badPage.status, badPage.body.errors]).toEqual([400, [{ field: 'limit', message: expect.any(String) }]]);
    expect(conformance(contacts, 'GET', '/api', badPage)).toEqual([]);

    // The check can fail: an answer missing a field of the contract does not conform.
    const { id: _id, ...withoutId } = created.body;
    expect(conformance(contacts, 'POST', '/api/contacts', { ...created, body: withoutId })).not.toEqual([]);
    expect(conformance(contacts, 'POST', '/api/contacts', { ...created, status: 418 })).not.toEqual([]);
  });

  it('refuses unknown body fields the same way in all three services, naming them, and writes nothing', async () => {
    const auth = { authorization: `Bearer ${token}` };
    const cases: Array<[string, string, unknown, Record<string, string>]> = [
      [bases.contacts, '/api/contacts', { firstName: 'X', shoeSize: 44 }, {}],
      [bases.social, '/api/posts', { content: 'x', colour: 'blue' }, auth],
      [bases.surveys, '/api/auth/magic/request', { email: 'a@example.com', remember: true }, {}],
    ];
    for (const [base, route, body, headers] of cases) {
      const res = await rest('POST', `${base}${route}`, body, headers);
      expect({ route, status: res.status }).toEqual({ route, status: 400 });
      expect(res.headers.get('content-type')).toContain('application/problem+json');
      expect(res.body.errors).toEqual([{ field: Object.keys(body as object)[1], message: 'is not a known field' }]);
    }
    const wrongType = await rest('POST', `${bases.social}/api/posts`, { content: 'x', platforms: 'mastodon' }, auth);
    expect([wrongType.status, wrongType.body.errors]).toEqual([
      400,
      [{ field: 'platforms', message: 'must be a list' }],
    ]);
    expect(
      (await rest('GET', `${bases.social}/api/posts`, undefined, auth)).body.data.map(
        (p: { content: string }) => p.content,
      ),
    ).toEqual(['documented']);
  });
});
