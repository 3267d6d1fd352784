import { z } from 'zod';
import {
  createDocument,
  type ZodOpenApiOperationObject,
  type ZodOpenApiPathsObject,
  type ZodOpenApiResponsesObject,
} from 'zod-openapi';
import { problemSchema } from './rest-schemas.js';
import { takesIdempotencyKey, type ApiDescription, type DocumentedRoute } from './route-doc.js';

/**
 * OpenAPI 3.1 documents of the REST services, made from the route tables the adapters run on:
 * each route carries a `RouteDoc` (zod 4 schemas of its parameters, body and answer), and
 * `openApiDocument` turns the table into the document with zod-openapi. The JSON body schema is
 * also what the adapter checks a body against (lib/rest/rest.ts), so a body is described once.
 */

export const API_VERSION = '1.0.0';

// --- The document ---

const PROBLEM_DESCRIPTIONS: Record<number, string> = {
  400: 'Bad input: the problem names each field or parameter that was refused',
  401: 'No credentials, or credentials that are not valid',
  403: 'Valid credentials without the scope (or reach) this needs',
  404: 'Not found (or not visible to the caller)',
  409: 'The item is in a state that does not allow this (the problem says which)',
  410: 'Gone: expired or revoked',
  422: 'The Idempotency-Key was already used with another request (within 24 hours): nothing was done',
  412: 'If-Match names a version the resource no longer has (or it does not exist): nothing was changed',
  413: 'The body or file is larger than the limit',
  415: 'The body is not JSON (Content-Type: application/json)',
  429: 'Too many requests: wait as long as Retry-After says',
  500: 'Server error (logged with the request id, which the problem carries)',
  502: 'An upstream service failed',
  503: 'Not available: not configured, or not healthy',
};

const retryAfter = z.object({ 'Retry-After': z.int().meta({ description: 'Seconds to wait before trying again' }) });

const wwwAuthenticate = z.object({
  'WWW-Authenticate': z.string().meta({
    description:
      'RFC 6750 challenge: `Bearer`, or `Bearer error="invalid_token"` when the token sent was refused (expired, bad signature)',
    example: 'Bearer error="invalid_token"',
  }),
});

// On every answer to a request the limit counted: one refused before that (a body of the wrong shape) has none.
const rateLimitHeaders = z.object({
  'RateLimit-Policy': z.string().optional().meta({
    description:
      'The limits of this route (draft-ietf-httpapi-ratelimit-headers): per policy its quota `q` in a window of `w` seconds',
    example: '"social-review-client";q=60;w=60',
  }),
  RateLimit: z.string().optional().meta({
    description: 'Where each limit stands for the caller: `r` requests remaining, `t` seconds until the quota is whole',
    example: '"social-review-client";r=59;t=60',
  }),
});

const locationHeader = z.object({
  Location: z.string().meta({ description: 'Path of the created resource', example: '/api/contacts/{id}' }),
});

const linkHeader = (list: NonNullable<DocumentedRoute['list']>) =>
  z.object({
    Link: z.string().meta({
      description:
        list === 'pages'
          ? 'RFC 8288 links to the first, previous, next and last pages (those that exist), root-relative, other query parameters kept'
          : 'RFC 8288 link to the next items (`rel="next"`, root-relative), while there are more',
      example: list === 'pages' ? '</api/items?page=2&limit=20>; rel="next"' : '</api/items?cursor=abc>; rel="next"',
    }),
  });

const entityTag = (sent: 'always' | 'when the answer is the resource') =>
  z.object({
    ETag: (sent === 'always' ? z.string() : z.string().optional()).meta({
      description:
        'Strong entity tag: the version of the resource, which goes up with every change of it. Send it back ' +
        'as If-None-Match (a GET answers 304 while it holds) or If-Match (a change answers 412 once it no longer holds)',
      example: '"3"',
    }),
  });

const ifNoneMatch = z.object({
  'If-None-Match': z.string().optional().meta({
    description: 'The ETag of the copy the client holds: while it is still current, the answer is 304 without a body',
    example: '"3"',
  }),
});

const idempotencyKey = z.object({
  'Idempotency-Key': z
    .string()
    .min(1)
    .max(255)
    .optional()
    .meta({
      description:
        'Any unique text (a UUID): the same key with the same body from the same caller within 24 hours answers ' +
        'the first answer again (status, body, Idempotent-Replayed: true) and does nothing more; with another ' +
        'body, 422; while the first is still running, 409. An answer that was an error is not kept: the request runs again',
      example: '6f1c3e0b-5a7d-4f0e-9c1a-2d3e4f5a6b7c',
    }),
});

const idempotentReplayed = z.object({
  'Idempotent-Replayed': z
    .literal('true')
    .optional()
    .meta({ description: 'Present when this is the answer to an earlier request with the same Idempotency-Key' }),
});

const ifMatch = z.object({
  'If-Match': z
    .string()
    .optional()
    .meta({
      description:
        'Change only if the resource is still at this ETag (one strong entity tag) or, with *, exists at all; ' +
        'otherwise 412 and nothing changes. The check and the change are one transaction: of two writers holding the same ETag, one wins',
      example: '"3"',
    }),
});

const lastEventId = z.object({
  'Last-Event-ID': z
    .string()
    .optional()
    .meta({
      description:
        'With Accept: text/event-stream, the id of the last event received: the stream resumes after it ' +
        '(every later event, oldest first, none twice), then follows',
    }),
});

/** Response headers of a route's answers with `status`, from what its table declares. */
function headersOf(route: DocumentedRoute, status: number, own?: z.ZodObject): z.ZodObject | undefined {
  const parts = [
    own,
    takesIdempotencyKey(route) && status >= 200 && status < 300 ? idempotentReplayed : undefined,
    route.versioned && (status === 200 || status === 304)
      ? entityTag(route.method === 'get' ? 'always' : 'when the answer is the resource')
      : undefined,
    status === 201 && route.created ? locationHeader : undefined,
    status === 200 && route.list ? linkHeader(route.list) : undefined,
    route.rateLimit ? rateLimitHeaders : undefined,
    status === 429 ? retryAfter : undefined,
    status === 401 ? wwwAuthenticate : undefined,
  ].filter((part) => part !== undefined);
  return parts.length ? z.object(Object.assign({}, ...parts.map((part) => part.shape))) : undefined;
}

/** The failure statuses of a route: the ones that follow from its shape, plus its own. */
export function problemStatuses(route: DocumentedRoute, secured: boolean): number[] {
  const doc = route.doc;
  const statuses = new Set<number>([500, ...(doc?.problems ?? []), ...(route.rateLimit ? [429] : [])]);
  if (route.versioned && route.method !== 'get') statuses.add(412);
  if (takesIdempotencyKey(route)) for (const status of [409, 422]) statuses.add(status);
  if (doc?.body || doc?.multipart) for (const status of [400, 413]) statuses.add(status);
  if (doc?.body) statuses.add(415);
  // Every route of a table passes the paging and text checks (lib/input.ts) and the JSON body parser
  // before its handler: `?limit=0` or a malformed JSON body is a 400 on any of them.
  if (!doc.beforeInputChecks) statuses.add(400);
  if (pathParams(route.path).length) statuses.add(404);
  if (secured) for (const status of [401, 403]) statuses.add(status);
  return [...statuses].sort((a, b) => a - b);
}

function pathParams(routePath: string): string[] {
  return [...routePath.matchAll(/:(\w+)/g)].map((match) => match[1]);
}

/** Express's `/api/posts/:postId` as OpenAPI's `/api/posts/{postId}`. */
export const openApiPath = (routePath: string) => routePath.replace(/:(\w+)/g, '{$1}');

function operationOf(route: DocumentedRoute, api: ApiDescription): ZodOpenApiOperationObject {
  const doc = route.doc;
  const security = doc?.open ? [] : (api.securityOf?.(route) ?? []);
  const params = pathParams(route.path);
  const answer = doc?.answer ?? { status: 200, description: 'OK' };

  const responses: ZodOpenApiResponsesObject = {};
  for (const status of problemStatuses(route, security.length > 0)) {
    const headers = headersOf(route, status);
    const keyStillRunning = status === 409 && takesIdempotencyKey(route);
    responses[`${status}` as `4${string}`] = {
      description: keyStillRunning
        ? `${PROBLEM_DESCRIPTIONS[409]}, or a request with the same Idempotency-Key is still running`
        : (PROBLEM_DESCRIPTIONS[status] ?? 'Failure'),
      content: { 'application/problem+json': { schema: problemSchema } },
      ...(headers ? { headers } : {}),
    };
  }
  for (const { status, description, json, content: others, headers: own } of [answer, ...(doc?.alsoAnswers ?? [])]) {
    const headers = headersOf(route, status, own);
    const content: Record<string, { schema: z.ZodType }> = {};
    if (json) content['application/json'] = { schema: json };
    for (const [type, schema] of Object.entries(others ?? {})) content[type] = { schema };
    if (route.eventStream && status === answer.status) {
      content['text/event-stream'] = { schema: z.string().meta({ description: route.eventStream.description }) };
    }
    responses[`${status}` as `2${string}`] = {
      description,
      ...(Object.keys(content).length ? { content } : {}),
      ...(headers ? { headers } : {}),
    };
  }
  if (route.versioned && route.method === 'get') {
    responses['304'] = {
      description: 'Not modified: If-None-Match names the current ETag; no body',
      headers: headersOf(route, 304),
    };
  }
  const requestHeaders = [
    route.versioned ? (route.method === 'get' ? ifNoneMatch : ifMatch) : undefined,
    takesIdempotencyKey(route) ? idempotencyKey : undefined,
    route.eventStream?.resumes ? lastEventId : undefined,
  ].filter((part) => part !== undefined);
  const header = requestHeaders.length
    ? z.object(Object.assign({}, ...requestHeaders.map((part) => part.shape)))
    : undefined;

  return {
    summary: route.summary,
    operationId: doc.operationId,
    tags: [doc.tag],
    ...(doc?.multipart
      ? {
          description:
            'With an Idempotency-Key, the same request is the same file (the same bytes) with the same other fields and parameters.',
        }
      : {}),
    ...(params.length || doc?.query || header
      ? {
          requestParams: {
            ...(header ? { header } : {}),
            ...(params.length
              ? {
                  path: z.object(
                    Object.fromEntries(
                      params.map((name) => [
                        name,
                        z.string().meta({ description: doc?.params?.[name] ?? 'Identifier' }),
                      ]),
                    ),
                  ),
                }
              : {}),
            ...(doc?.query ? { query: doc.query } : {}),
          },
        }
      : {}),
    ...(doc?.body ? { requestBody: { required: true, content: { 'application/json': { schema: doc.body } } } } : {}),
    ...(doc?.multipart
      ? { requestBody: { required: true, content: { 'multipart/form-data': { schema: doc.multipart } } } }
      : {}),
    responses,
    security,
  };
}

const probeAnswer = (status: string) => z.object({ status: z.literal(status) });

/** `/healthz` and `/readyz`, which lib/http/http.ts `addProbes` serves on every REST service beside its table. */
const PROBES: DocumentedRoute[] = [
  {
    method: 'get',
    path: '/healthz',
    summary: 'Liveness probe: the process answers',
    doc: {
      operationId: 'getLiveness',
      tag: 'service',
      answer: { status: 200, description: 'Alive', json: probeAnswer('ok') },
      open: true,
      beforeInputChecks: true,
    },
  },
  {
    method: 'get',
    path: '/readyz',
    summary: 'Readiness probe: 503 while starting or shutting down',
    doc: {
      operationId: 'getReadiness',
      tag: 'service',
      answer: { status: 200, description: 'Ready to serve', json: probeAnswer('ready') },
      alsoAnswers: [
        { status: 503, description: 'Not ready (starting or shutting down)', json: probeAnswer('not ready') },
      ],
      open: true,
      beforeInputChecks: true,
    },
  },
];

/** The tag of the routes that tell about the service itself, declared in every document. */
const SERVICE_TAG = {
  service: 'About the service: its endpoints, health, probes, this document and its reference page',
};

export type OpenApiDocument = ReturnType<typeof createDocument>;

/**
 * A table whose operations a generated client could not name apart, or whose tags the document does
 * not declare, is refused when its document is made (`npm run schema`, a test) rather than shipped.
 */
function checkNamesAndTags(routes: readonly DocumentedRoute[], tags: Record<string, string>): void {
  const seen = new Map<string, string>();
  for (const route of routes) {
    const where = `${route.method.toUpperCase()} ${route.path}`;
    const earlier = seen.get(route.doc.operationId);
    if (earlier) throw new Error(`operationId ${route.doc.operationId} of ${where} is already that of ${earlier}`);
    seen.set(route.doc.operationId, where);
    if (!(route.doc.tag in tags)) throw new Error(`tag ${route.doc.tag} of ${where} is not one the service declares`);
  }
}

/** The OpenAPI 3.1 document of a service: every route of its table, and the probes every service answers. */
export function openApiDocument(api: ApiDescription, routes: readonly DocumentedRoute[]): OpenApiDocument {
  const paths: ZodOpenApiPathsObject = {};
  const tags = { ...SERVICE_TAG, ...api.tags };
  checkNamesAndTags([...routes, ...PROBES], tags);
  for (const route of [...routes, ...PROBES]) {
    const item = (paths[openApiPath(route.path)] ??= {});
    item[route.method] = operationOf(route, api);
  }
  return createDocument({
    openapi: '3.1.0',
    info: { title: api.title, version: API_VERSION, description: api.description },
    // First the address the document is read from: the API reference tries requests out on the first server,
    // which must be the service that serves it wherever it is deployed. Then the local defaults, as a template.
    servers: [
      { url: '/', description: 'This service, at the address this document was fetched from' },
      {
        url: 'http://{host}:{port}',
        description: 'Run locally: the defaults; a deployment serves the service at its own address',
        variables: {
          host: { default: 'localhost', description: 'The host the service is reached at' },
          port: { default: `${api.localPort.port}`, description: `${api.localPort.variable} of the service` },
        },
      },
    ],
    tags: Object.entries(tags).map(([name, description]) => ({ name, description })),
    paths,
    components: { securitySchemes: api.securitySchemes ?? {} },
  });
}
