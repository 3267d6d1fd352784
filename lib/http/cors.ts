import cors from 'cors';
import type { RequestHandler } from 'express';
import type { Config } from '../config.js';

/** Request headers a page may send: its credentials, a JSON body, and a request id to follow its call by. */
export const CORS_REQUEST_HEADERS = ['Authorization', 'Content-Type', 'X-API-Key', 'X-Request-Id'];

/** Answer headers a page may read besides the CORS-safelisted ones (a page pages, waits and signs in again by them too). */
export const CORS_EXPOSED_HEADERS = [
  'Retry-After',
  'Location',
  'X-Request-Id',
  'Link',
  'RateLimit-Policy',
  'RateLimit',
  'WWW-Authenticate',
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
