import type { z } from 'zod';
import type { ZodOpenApiSecuritySchemeObject } from 'zod-openapi';
import type { RouteRateLimit } from '../http/rate-limit.js';

/** One answer of a route that is not a problem: what it answers when it works (or, rarely, a failure with a body of its own). */
export interface RouteAnswer {
  status: number;
  description: string;
  /** `application/json` body. */
  json?: z.ZodType;
  /** Bodies of other media types (CSV, a file, an exported page). */
  content?: Record<string, z.ZodType>;
  /** Response headers (`Location`...). */
  headers?: z.ZodObject;
}

/** What the OpenAPI document says about one route. */
export interface RouteDoc {
  /**
   * The operation's name, unique in its service's document (`listContacts`, `createNote`): what a
   * generated client calls the method, so it is chosen once here and never derived from the path.
   */
  operationId: string;
  /** The resource the route belongs to: one of the tags its service's `ApiDescription` declares. */
  tag: string;
  /** Description of each path parameter (every path parameter is text). */
  params?: Record<string, string>;
  /** Query parameters, with their types and limits (documented; the subgraph checks them). */
  query?: z.ZodObject;
  /** The JSON body: documented, and checked by the adapter before the handler runs (shape and types, unknown fields refused). */
  body?: z.ZodType;
  /** A `multipart/form-data` body (documented; lib/storage/multipart.ts reads it). */
  multipart?: z.ZodObject;
  answer: RouteAnswer;
  /** Answers besides `answer` that are not problem bodies (a probe's 503). */
  alsoAnswers?: RouteAnswer[];
  /**
   * Failure statuses of this route beyond the ones that follow from its shape (500 always; 400,
   * 413 and 415 with a body; 400 with query parameters; 404 with path parameters; 401 and 403
   * with credentials): 409 for a state that forbids the change, 429 for a rate limit...
   */
  problems?: number[];
  /** The route takes no credentials, where its service's other routes do. */
  open?: boolean;
  /** Served before the input checks every route of a table passes (the probes): it never answers 400. */
  beforeInputChecks?: boolean;
}

/** The route table's view this module needs (lib/rest/rest.ts `RestRoute` has it). */
export interface DocumentedRoute {
  method: 'get' | 'post' | 'put' | 'patch' | 'delete';
  path: string;
  summary: string;
  doc: RouteDoc;
  /**
   * Path of the resource a 201 of this route creates, each `{field}` filled from the answer
   * (`/api/contacts/{id}`): sent as `Location`.
   */
  created?: string;
  /**
   * The route also answers as server-sent events when asked with `Accept: text/event-stream`: its 200
   * answer gets a `text/event-stream` body of that description and, when a reconnect resumes, the
   * request a `Last-Event-ID` header.
   */
  eventStream?: { description: string; resumes?: boolean };
  /**
   * The answer is a list: `pages` (`{ data, page, limit, total }`) gets `Link` first, prev, next and
   * last; a cursor list (`nextCursor`) gets `Link` next, with the cursor in the named query parameter.
   */
  list?: 'pages' | { cursorParameter: string };
  /** The route is rate limited, here or in the subgraph: its answers carry `RateLimit-Policy` and `RateLimit`. */
  rateLimit?: RouteRateLimit;
  /**
   * The route reads or writes one resource that has a version (lib/data/versions.ts): the `version`
   * its operation answers leaves the body and becomes a strong `ETag`; a GET honours `If-None-Match`
   * (304), a PUT, PATCH or DELETE `If-Match` (412, nothing changed). The handler of a write passes
   * `ifMatchVersion(req)` to its mutation as `ifVersion` (lib/rest/conditional-requests.ts).
   */
  versioned?: true;
}

/**
 * Whether the route takes an `Idempotency-Key` (lib/data/idempotency.ts): every POST, multipart
 * uploads included (the key goes with their commit, whose fingerprint is the file's SHA-256 and
 * the form's other fields: lib/storage/multipart-upload.ts).
 */
export function takesIdempotencyKey(route: Pick<DocumentedRoute, 'method'>): boolean {
  return route.method === 'post';
}

/** One service's document: its name, what it is, and how callers prove who they are. */
export interface ApiDescription {
  title: string;
  description: string;
  /** The port the service listens on by default, and the variable that changes it (the document's `servers`). */
  localPort: { port: number; variable: string };
  /** The resources of the service (each route's `tag`), with what each is; `service` (about the service itself) is added. */
  tags: Record<string, string>;
  securitySchemes?: Record<string, ZodOpenApiSecuritySchemeObject>;
  /** The credentials a route of the service takes, as OpenAPI security requirements (alternatives); none when omitted. */
  securityOf?: (route: DocumentedRoute) => Record<string, string[]>[];
}
