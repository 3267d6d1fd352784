import cors from 'cors';
import type { RequestHandler } from 'express';
import type { Config } from '../config.js';

/**
 * Request headers a page may send: its credentials, a JSON body, a request id to follow its call by, and
 * the REST conventions' own: `Idempotency-Key` (a safe retry), `If-Match` and `If-None-Match` (a conditional
 * change or read), `Prefer` (`respond-async` on the contacts import) and `Last-Event-ID` (resuming an event
 * stream). A header missing here fails the preflight, so the page could not send the request at all.
 */
export const CORS_REQUEST_HEADERS = [
  'Authorization',
  'Content-Type',
  'X-API-Key',
  'X-Request-Id',
  'Idempotency-Key',
  'If-Match',
  'If-None-Match',
  'Prefer',
  'Last-Event-ID',
];

/**
 * Answer headers a page may read besides the CORS-safelisted ones: the browser hides any other from its
 * script. A page pages (`Link`), waits (`Retry-After`, `RateLimit`, `RateLimit-Policy`), signs in again
 * (`WWW-Authenticate`), follows what it made (`Location`, `Preference-Applied`), tells a replay
 * (`Idempotent-Replayed`) and holds a version for its next conditional change (`ETag`) by them.
 */
export const CORS_EXPOSED_HEADERS = [
  'Retry-After',
  'Location',
  'X-Request-Id',
  'Link',
  'RateLimit-Policy',
  'RateLimit',
  'WWW-Authenticate',
  'ETag',
  'Idempotent-Replayed',
  'Preference-Applied',
];

/** How long a browser may reuse one preflight answer (Chromium caps it at 2 hours). */
const PREFLIGHT_MAX_AGE_SECONDS = 600;

/**
 * CORS for one path that serves `methods`: a preflight from an allowed origin (`CORS_ORIGINS`) gets
 * 204 with those methods and the request headers above; an actual request from it gets its origin
 * back with `Access-Control-Allow-Credentials: true` (never `*`: credentials travel). Any other
 * origin, and a request with no `Origin`, gets no CORS header at all and goes on to the route, whose
 * answer the browser then withholds from the page.
 */
export function corsFor(
  config: Pick<Config, 'corsOrigins'>,
  methods: readonly string[],
  extraRequestHeaders: readonly string[] = [],
): RequestHandler {
  const allowed = new Set(config.corsOrigins);
  const handler = cors({
    origin: (origin, callback) => callback(null, origin !== undefined && allowed.has(origin) ? origin : false),
    methods: [...methods],
    allowedHeaders: [...CORS_REQUEST_HEADERS, ...extraRequestHeaders],
    exposedHeaders: CORS_EXPOSED_HEADERS,
    credentials: true,
    maxAge: PREFLIGHT_MAX_AGE_SECONDS,
    optionsSuccessStatus: 204,
  });
  return (req, res, next) => {
    // The answer depends on the Origin whether or not it is allowed: a shared cache must keep them apart.
    res.vary('Origin');
    handler(req, res, next);
  };
}
