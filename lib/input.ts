import { isUtf8 } from 'node:buffer';
import type { IncomingMessage } from 'node:http';
import type { NextFunction, Request, Response } from 'express';
import { AppError } from './errors.js';
import { MAX_PAGE_SIZE } from './pagination.js';

/**
 * Input checks every request gets in one place, before any route or resolver sees it: the REST
 * adapters, the gateway and the subgraphs all mount them, so no route can forget one.
 */

/**
 * `verify` of `express.json`: a body that is not valid UTF-8 is refused rather than decoded with
 * U+FFFD in place of its bad bytes (which would then be stored as if the client had sent them).
 */
export function refuseInvalidUtf8(_req: IncomingMessage, _res: unknown, body: Buffer): void {
  if (!isUtf8(body)) throw AppError.badInput('body', 'is not valid UTF-8');
}

// NUL, or a lone surrogate: a high one not followed by a low one, or a low one not preceded by a high one.
// eslint-disable-next-line no-control-regex -- NUL is what PostgreSQL refuses in text
const UNSTORABLE = /\u0000|[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/;

/** Why PostgreSQL could not store this text, or undefined when it can. */
export function unstorable(text: string): string | undefined {
  const match = UNSTORABLE.exec(text);
  if (!match) return undefined;
  return match[0] === '\u0000'
    ? 'must not contain a NUL character (U+0000)'
    : 'must not contain a lone UTF-16 surrogate (not valid Unicode)';
}

/**
 * The first string in `value` (keys included) that PostgreSQL cannot store as text (NUL, lone
 * surrogates), as a problem naming where it is (`tags[1]`, `input.content`), or undefined.
 */
export function findUnstorableText(value: unknown, path: string): AppError | undefined {
  if (typeof value === 'string') {
    const why = unstorable(value);
    return why ? AppError.badInput(path || 'body', why) : undefined;
  }
  if (Array.isArray(value)) {
    for (const [index, item] of value.entries()) {
      const problem = findUnstorableText(item, `${path}[${index}]`);
      if (problem) return problem;
    }
    return undefined;
  }
  if (value && typeof value === 'object') {
    for (const [key, item] of Object.entries(value)) {
      const where = path ? `${path}.${key}` : key;
      const keyProblem = unstorable(key);
      if (keyProblem) return AppError.badInput(path || 'body', `field names ${keyProblem}`);
      const problem = findUnstorableText(item, where);
      if (problem) return problem;
    }
  }
  return undefined;
}

/** Matches a GraphQL string escape that decodes to NUL (`\u0000`, `\u{0}`), not an escaped backslash before it. */
const NUL_ESCAPE = /(?<!\\)(?:\\\\)*\\u(?:0000|\{0+\})/i;

/**
 * Express middleware of the REST adapters: text in the JSON body and the query string that
 * PostgreSQL cannot store is a 400 naming the field or parameter, for every route alike.
 */
export function refuseUnstorableText(req: Request, _res: Response, next: NextFunction): void {
  next(findUnstorableText(req.query, '') ?? findUnstorableText(req.body, ''));
}

/**
 * The same for a GraphQL request body (`{ query, variables }`), on the gateway and the subgraphs:
 * a variable is named by its path without the `variables.` prefix (`input.content`), and a string
 * literal in the document that decodes to NUL names `query`.
 */
export function refuseUnstorableGraphQLText(req: Request, _res: Response, next: NextFunction): void {
  const body = req.body as { query?: unknown; variables?: unknown } | undefined;
  if (!body || typeof body !== 'object') return next();
  if (typeof body.query === 'string' && NUL_ESCAPE.test(body.query)) {
    return next(AppError.badInput('query', 'has a string that decodes to a NUL character (U+0000)'));
  }
  next(findUnstorableText(body.variables, '') ?? findUnstorableText(req.query, ''));
}

/** Paging parameters of the REST lists, checked alike on every route that takes them. */
const PAGING = {
  page: { max: 1_000_000, name: 'page', rule: 'an integer of 1 or more' },
  limit: { max: MAX_PAGE_SIZE, name: 'limit', rule: `an integer from 1 to ${MAX_PAGE_SIZE}` },
};

/**
 * Express middleware of the REST adapters: `page` and `limit`, when present, are whole numbers in
 * range. Anything else (`-1`, `0`, `1.5`, `abc`, empty, huge, repeated, `page[]=`) is a 400 naming
 * the parameter, never a silent fallback to the default.
 */
export function checkPagingParameters(req: Request, _res: Response, next: NextFunction): void {
  const query = req.query as Record<string, unknown>;
  for (const key of Object.keys(query)) {
    const name = /^(page|limit)\[/.exec(key)?.[1] ?? key;
    if (!(name in PAGING)) continue;
    const { max, rule } = PAGING[name as keyof typeof PAGING];
    const value = query[key];
    const valid = key === name && typeof value === 'string' && /^[1-9]\d{0,6}$/.test(value) && Number(value) <= max;
    if (!valid) return next(AppError.badInput(name, `must be ${rule}`));
  }
  next();
}
