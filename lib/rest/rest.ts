import express, {
  type Express,
  type NextFunction,
  type Request,
  type RequestHandler,
  type Response,
  type Router,
} from 'express';
import type { Config } from '../config.js';
import { AppError, ErrorCode, INTERNAL_MESSAGE, problemFor, requestReadError, type ProblemDetails } from '../errors.js';
import { apiReferenceAssets, DOCS_PATH, OPENAPI_PATH } from './api-reference.js';
import { corsFor } from '../http/cors.js';
import { applyTrustProxy } from '../http/client-address.js';
import { EventStreams, sendEventStream, wantsEventStream, type StreamEvent } from './event-stream.js';
import { addProbes } from '../http/http.js';
import { checkPagingParameters, checkJsonBody, refuseUnstorableText } from '../http/input.js';
import { CACHE_CONTROL, compressAnswers } from '../http/http-answers.js';
import { API_VERSION } from './openapi.js';
import { parseBody } from './rest-bodies.js';
import { serviceInfoSchema } from './rest-schemas.js';
import { takesIdempotencyKey, type DocumentedRoute, type RouteDoc } from './route-doc.js';
import { IDEMPOTENCY_KEY_HEADER } from '../data/idempotency.js';
import { rateLimitHeaders } from '../http/rate-limit.js';
import { answerHeaders, bearerChallenge } from './rest-headers.js';
import { ProblemError } from './run-operation.js';
import {
  entityTagOf,
  entityTagOfBody,
  ifMatchOf,
  ifNoneMatchHolds,
  parseIfMatch,
  preconditionFailed,
  rememberIfMatch,
  splitVersion,
} from './conditional-requests.js';
import { assignRequestId, httpLogger, requestIdOf, type Logger } from '../observability/logger.js';
import { httpMetrics } from '../observability/metrics.js';
import { inRequestTrace, traceRequests } from '../observability/tracing.js';

export type HttpMethod = 'get' | 'post' | 'put' | 'patch' | 'delete';

/** One documented REST endpoint: where it lives, what it is for, and the handler that serves it. */
export interface RestRoute extends DocumentedRoute {
  method: HttpMethod;
  path: string;
  summary: string;
  handler: (req: Request, res: Response) => Promise<void> | void;
  /** Middleware that runs before the handler (e.g. a multipart parser instead of JSON). */
  before?: RequestHandler[];
  /** `Cache-Control` of the answer (a handler may still set its own); default `CACHE_CONTROL.personal`. */
  cacheControl?: string;
  /** Its part of the service's OpenAPI document; a JSON `body` schema there is also checked before the handler runs. */
  doc: RouteDoc;
  /**
   * The REST name of each operation variable the route fills from a parameter of another name
   * (`{ after: 'cursor' }`), so that a problem names the parameter the client sent.
   */
  parameterNames?: Record<string, string>;
  /**
   * The route also answers as server-sent events when asked with `Accept: text/event-stream`: the
   * events, opened as the caller (a refusal thrown here is a problem answer, before any event).
   * Without that `Accept` the route answers as `handler` does.
   */
  eventStream?: NonNullable<DocumentedRoute['eventStream']> & {
    events(req: Request): Promise<AsyncIterator<StreamEvent>>;
    /** As `parameterNames`, for the stream's operation (`{ after: 'Last-Event-ID' }`). */
    parameterNames?: Record<string, string>;
  };
}

/**
 * A query parameter as text: Express gives repeated parameters as an array (joined here with
 * commas) and bracketed ones (`a[b]=1`) as an object (its JSON here), for GraphQL to refuse by name.
 */
export function queryText(value: unknown): string {
  if (typeof value === 'string') return value;
  if (Array.isArray(value)) return value.map(queryText).join(',');
  return JSON.stringify(value) ?? '';
}

/** Query-string numbers arrive as text; numeric text becomes a number and anything else stays text for GraphQL to reject by name. */
export function numberParam(value: unknown): number | string | undefined {
  if (value === undefined || value === '') return undefined;
  if (typeof value !== 'string') return queryText(value);
  return /^-?\d+$/.test(value) ? Number(value) : value;
}

/** A yes/no query parameter: `true`/`false` (or `1`/`0`); absent: undefined; anything else a 400 naming it. */
export function booleanParam(name: string, value: unknown): boolean | undefined {
  if (value === undefined || value === '') return undefined;
  if (value === 'true' || value === '1') return true;
  if (value === 'false' || value === '0') return false;
  throw AppError.badInput(name, 'must be true or false');
}

export function stringParam(value: unknown): string | undefined {
  if (value === undefined) return undefined;
  return queryText(Array.isArray(value) ? value[0] : value);
}

/** A comma-separated query parameter as a list (`status=queued,failed`), or undefined when absent. */
export function listParam(value: unknown): string[] | undefined {
  if (value === undefined || value === '') return undefined;
  return queryText(value)
    .split(',')
    .map((item) => item.trim())
    .filter(Boolean);
}

/**
 * The JSON body as an object. No body at all reads as `{}` (the operation then names what is
 * missing); a body that is not JSON is a 415, and JSON that is not an object a 400.
 */
export function jsonBody(req: Request): Record<string, unknown> {
  const body: unknown = req.body;
  if (body === undefined) {
    const hasBody = Number(req.headers['content-length'] ?? 0) > 0 || req.headers['transfer-encoding'] !== undefined;
    if (!hasBody) return {};
    throw new ProblemError(
      problemFor(ErrorCode.UNSUPPORTED_MEDIA_TYPE, 'The body must be JSON (Content-Type: application/json)'),
    );
  }
  if (typeof body !== 'object' || body === null || Array.isArray(body)) {
    throw new ProblemError(problemFor(ErrorCode.BAD_USER_INPUT, 'The body must be a JSON object'));
  }
  return body as Record<string, unknown>;
}

/** Sends a problem body; a 401 always says how to authenticate (`WWW-Authenticate: Bearer`, RFC 6750). */
export function sendProblem(res: Response, problem: ProblemDetails, headers: Record<string, string> = {}): void {
  const challenge =
    problem.status === 401 && !headers['www-authenticate'] ? { 'www-authenticate': bearerChallenge() } : {};
  res
    .status(problem.status)
    .set({ ...headers, ...challenge })
    .type('application/problem+json')
    .send(JSON.stringify(problem));
}

export interface RestAppOptions {
  name: string;
  config: Config;
  logger: Logger;
  routes: RestRoute[];
  /** Routers that read the raw request body themselves (e.g. `storageRouter`); mounted before JSON parsing. */
  routers?: Router[];
  isReady?: () => boolean | Promise<boolean>;
  /** The event streams the app serves, ended by whoever stops it (lib/rest/rest-service.ts). */
  eventStreams?: EventStreams;
}

/**
 * An Express app serving exactly the routes given, with the behaviour every adapter shares:
 * request ids and logs, a JSON body limit, probes, 404 for an unknown path, 405 (with `Allow`)
 * for a known path and the wrong method, and problem bodies for every failure.
 */
export function createRestApp(options: RestAppOptions): Express {
  const { config, logger, routes, name } = options;
  const log = logger.child({ component: `${name}-rest` });
  const app = express();
  applyTrustProxy(app, config.env.TRUST_PROXY);
  app.disable('x-powered-by');
  app.set('query parser', 'simple');
  app.use(assignRequestId, httpMetrics(`${name}-rest`), traceRequests(`${name}-rest`), compressAnswers());
  addProbes(app, options.isReady ?? (() => true));
  app.use(httpLogger(logger, `${name}-rest`));
  const eventStreams = options.eventStreams ?? new EventStreams();
  const methodsByPath = allowedMethodsByPath(routes);
  for (const [routePath, methods] of methodsByPath) app.all(routePath, corsFor(config, methods));
  app.use(apiReferenceAssets());
  for (const router of options.routers ?? []) app.use(router);
  app.use(
    express.json({
      limit: config.env.BODY_LIMIT_BYTES,
      type: ['application/json', 'application/*+json'],
      verify: checkJsonBody,
    }),
  );
  app.use(refuseUnstorableText, checkPagingParameters);

  for (const route of routes) {
    const bodyCheck = route.doc?.body ? [checkBody(route.doc.body)] : [];
    // The subgraph keeps the Idempotency-Key of whatever mutation it comes with: it goes along only
    // where the route table says the route takes one.
    const keyCheck = takesIdempotencyKey(route) ? [] : [ignoreIdempotencyKey];
    app[route.method](
      route.path,
      ...keyCheck,
      ...(route.before ?? []),
      ...bodyCheck,
      async (req: Request, res: Response, next: NextFunction) => {
        const streaming = route.eventStream !== undefined && wantsEventStream(req);
        // The stream's operation has variables of its own, named after what the stream reads them from.
        const terms = streaming ? { ...route, parameterNames: route.eventStream?.parameterNames } : route;
        try {
          res.set('cache-control', route.cacheControl ?? CACHE_CONTROL.personal);
          if (route.created || route.list || route.versioned || route.method === 'get')
            setAnswerHeaders(route, req, res);
          if (route.versioned && route.method !== 'get') rememberIfMatch(req, parseIfMatch(req.get('if-match')));
          if (route.rateLimit && route.rateLimit !== 'subgraph') {
            const { limiter, keyOf, message } = route.rateLimit;
            await limiter.consume(keyOf(req), message, (state) => res.set(rateLimitHeaders([state])));
          }
          if (streaming && route.eventStream) {
            if (eventStreams.closing) {
              throw new ProblemError(
                problemFor(ErrorCode.SERVICE_UNAVAILABLE, 'The service is restarting: reconnect in a moment'),
                { 'retry-after': '1' },
              );
            }
            const events = await inRequestTrace(req, () => route.eventStream!.events(req));
            await sendEventStream(res, events, eventStreams, (error) => {
              const { problem } = toProblem(inRestTermsOf(terms, req, error), req);
              if (problem.status >= 500)
                log.error({ err: error, requestId: requestIdOf(req) }, 'an event stream failed');
              return problem;
            });
            return;
          }
          // Back in the request's span: reading a body (JSON, multipart) left it.
          await inRequestTrace(req, () => route.handler(req, res));
        } catch (error) {
          next(inRestTermsOf(terms, req, error));
        }
      },
    );
  }
  for (const [routePath, methods] of methodsByPath) {
    app.all(routePath, (req: Request, res: Response) => {
      const allow = methods.join(', ');
      sendProblem(
        res,
        problemFor(ErrorCode.METHOD_NOT_ALLOWED, `${req.method} is not supported here; use ${allow}`, {
          instance: req.originalUrl,
        }),
        { allow },
      );
    });
  }
  app.use((req: Request, res: Response) => {
    sendProblem(
      res,
      problemFor(ErrorCode.NOT_FOUND, `No route for ${req.method} ${req.path}`, { instance: req.originalUrl }),
    );
  });

  app.use((error: unknown, req: Request, res: Response, next: NextFunction) => {
    if (res.headersSent) {
      log.error({ err: error, requestId: requestIdOf(req) }, 'failed after the response started');
      res.destroy();
      return next();
    }
    const { problem, headers } = toProblem(error, req);
    if (problem.status >= 500) log.error({ err: error, requestId: req.id }, 'request failed');
    sendProblem(res, problem, headers);
  });
  return app;
}

/**
 * Adds `Location` and `Link` (lib/rest-headers.ts) to the JSON answer the handler sends, from its
 * status and body; on a versioned route, the answer's `version` leaves the body and becomes its
 * strong `ETag` (lib/rest/conditional-requests.ts). Any other GET of one thing (a view made of
 * several records, an import job) gets a strong `ETag` of its body's bytes. A GET whose
 * `If-None-Match` names the tag is answered 304 without a body. Lists keep Express's weak tag.
 */
function setAnswerHeaders(route: RestRoute, req: Request, res: Response): void {
  const json = res.json.bind(res);
  res.json = (answer: unknown) => {
    const { body, version } = route.versioned ? splitVersion(answer) : { body: answer };
    res.set(answerHeaders(route, req, res.statusCode, body));
    const ofOneThing = route.method === 'get' && !route.list && res.statusCode === 200;
    if (version === undefined && !ofOneThing) return json(body);
    const etag = version === undefined ? entityTagOfBody(body) : entityTagOf(version);
    res.set('etag', etag);
    const read = req.method === 'GET' || req.method === 'HEAD';
    if (read && res.statusCode === 200 && ifNoneMatchHolds(req.get('if-none-match'), etag)) {
      res.status(304).end();
      return res;
    }
    return json(body);
  };
}

const ignoreIdempotencyKey: RequestHandler = (req, _res, next) => {
  delete req.headers[IDEMPOTENCY_KEY_HEADER];
  next();
};

/** Before the handler: the JSON body in its documented shape (`parseBody`), or a 400 naming each field that is not. */
function checkBody(schema: NonNullable<RouteDoc['body']>): RequestHandler {
  return (req, _res, next) => {
    req.body = parseBody(schema, jsonBody(req));
    next();
  };
}

/** The methods each path of the table serves (HEAD with every GET), in the table's order. */
function allowedMethodsByPath(routes: RestRoute[]): Map<string, string[]> {
  const methodsByPath = new Map<string, string[]>();
  for (const route of routes) {
    const methods = methodsByPath.get(route.path) ?? [];
    const added = route.method === 'get' ? ['GET', 'HEAD'] : [route.method.toUpperCase()];
    methodsByPath.set(route.path, [...new Set([...methods, ...added])]);
  }
  return methodsByPath;
}

/**
 * A failure of a route in the terms of its request: operation variables renamed to the REST
 * parameters they came from (a version the service refused to the `If-Match` it came from), and a
 * conditional write whose resource does not exist a 412 rather than a 404 (RFC 9110 §13.1.1: no
 * current representation matches `If-Match`, not even `*`).
 */
function inRestTermsOf(route: RestRoute, req: Request, error: unknown): unknown {
  if (!route.versioned) return route.parameterNames ? inRestTerms(error, route.parameterNames) : error;
  const missing = error instanceof ProblemError && error.problem.status === 404;
  if (missing && ifMatchOf(req).kind !== 'absent') return preconditionFailed('names a resource that does not exist');
  return inRestTerms(error, { ifVersion: 'If-Match', ...route.parameterNames });
}

/** A problem about operation variables, renamed to the REST parameters they came from. */
function inRestTerms(error: unknown, names: Record<string, string>): unknown {
  if (!(error instanceof ProblemError) || !error.problem.errors) return error;
  const errors = error.problem.errors.map((problem) => ({ ...problem, field: names[problem.field] ?? problem.field }));
  return new ProblemError({ ...error.problem, errors }, error.headers);
}

function toProblem(error: unknown, req: Request): { problem: ProblemDetails; headers: Record<string, string> } {
  const instance = req.originalUrl;
  if (error instanceof ProblemError) return { problem: { ...error.problem, instance }, headers: error.headers };
  if (error instanceof AppError) {
    return {
      problem: problemFor(error.code, error.message, {
        instance,
        ...(error.fields.length ? { errors: error.fields } : {}),
      }),
      headers: error.retryAfter !== undefined ? { 'retry-after': String(error.retryAfter) } : {},
    };
  }
  const unreadable = requestReadError(error);
  if (unreadable) return { problem: problemFor(unreadable.code, unreadable.message, { instance }), headers: {} };
  return {
    problem: problemFor(ErrorCode.INTERNAL_SERVER_ERROR, INTERNAL_MESSAGE, {
      instance,
      requestId: typeof req.id === 'string' || typeof req.id === 'number' ? String(req.id) : requestIdOf(req),
    }),
    headers: {},
  };
}

/** The route table as `GET /api` shows it: `{ method, path, summary }`, paths in `{param}` form. */
export function describeRoutes(routes: RestRoute[]): { method: string; path: string; summary: string }[] {
  return routes.map((route) => ({
    method: route.method.toUpperCase(),
    path: route.path.replace(/:(\w+)/g, '{$1}'),
    summary: route.summary,
  }));
}

/**
 * `GET /api` (metadata and every endpoint) of a REST service; `/health` checks the service's parts
 * (lib/rest/health-routes.ts). `routes` is read when `/api` is asked, so the listing is the live route table.
 */
export function serviceInfoRoutes(service: string, routes: () => RestRoute[]): RestRoute[] {
  return [
    {
      method: 'get',
      path: '/api',
      summary: 'API metadata and available endpoints',
      cacheControl: CACHE_CONTROL.public,
      doc: {
        operationId: 'getServiceInfo',
        tag: 'service',
        answer: {
          status: 200,
          description: 'The service, its endpoints, and where its API reference is',
          json: serviceInfoSchema,
        },
        open: true,
      },
      handler: (_req, res) => {
        res.json({
          name: service,
          version: API_VERSION,
          endpoints: describeRoutes(routes()),
          openapi: OPENAPI_PATH,
          docs: DOCS_PATH,
        });
      },
    },
  ];
}
