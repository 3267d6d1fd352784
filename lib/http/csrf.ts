import type { RequestHandler } from 'express';
import type { Config } from '../config.js';
import { AppError, ErrorCode } from '../errors.js';

/**
 * Cross-site request forgery protection for the ports that run GraphQL from a browser, in place of
 * Apollo Server's `csrfPrevention` (which refuses every GET without an `Apollo-Require-Preflight`
 * header, and so urql's default GET queries).
 *
 * A forgery is a request a page on another site makes the browser send with the user's cookies
 * without CORS asking the server first: a form POST, an image or script GET, a `no-cors` fetch.
 * Every browser of today says where a request comes from in `Sec-Fetch-Site` (Fetch Metadata), which
 * a page cannot set or remove. So a request marked `cross-site` runs only when its `Origin` is one
 * of `CORS_ORIGINS`: such a page may call with credentials anyway, and a browser sends that `Origin`
 * only on a CORS request (a preflighted one for JSON POSTs). Everything else cross-site (a form, an
 * image, a page of a foreign origin) is refused before any GraphQL is parsed, queries included, so
 * nothing runs and nothing can be timed. Requests from the same origin or the same site, and ones the
 * user typed (`none`), run. Clients that are no browser send no Fetch Metadata and run as before:
 * they carry their own credentials, which no foreign page can make them spend.
 *
 * A browser too old for Fetch Metadata is still covered where it matters: a cross-site form can only
 * send a body that is not JSON, which the GraphQL endpoint never runs; a GET never runs a mutation
 * (405); and the session cookie is `SameSite=Lax`, so a foreign image or script GET carries none.
 */
export function refuseCrossSiteRequests(config: Pick<Config, 'corsOrigins'>): RequestHandler {
  const allowed = new Set(config.corsOrigins);
  return (req, _res, next) => {
    if (req.get('sec-fetch-site') !== 'cross-site') return next();
    const origin = req.get('origin');
    if (origin !== undefined && allowed.has(origin)) return next();
    next(
      new AppError(
        ErrorCode.FORBIDDEN,
        'A cross-site request runs only from an allowed origin (CORS_ORIGINS); this one was refused and ran nothing',
      ),
    );
  };
}
