import { isUtf8 } from 'node:buffer';
import type { IncomingMessage } from 'node:http';
import type { NextFunction, Request, Response } from 'express';
import { AppError } from '../errors.js';
import { MAX_PAGE_SIZE } from '../data/pagination.js';

/**
 * Input checks every request gets in one place, before any route or resolver sees it: the REST
 * adapters, the gateway and the subgraphs all mount them, so no route can forget one.
 */

/**
 * A body that is not valid UTF-8 is refused rather than decoded with U+FFFD in place of its bad
 * bytes (which would then be stored as if the client had sent them).
 */
function refuseInvalidUtf8(_req: IncomingMessage, _res: unknown, body: Buffer): void {
  if (!isUtf8(body)) throw AppError.badInput('body', 'is not valid UTF-8');
}

/**
 * Deepest nesting of arrays and objects a JSON body may have. No input of the platform nests more
 * than a few levels (a REST body, a GraphQL input inside `variables`); 64 leaves room for any honest
 * body, while a body of nothing but brackets (a megabyte of them is half a million levels) is
 * refused before the code behind the parser, which walks values by recursion (graphql-js input
 * coercion, JSON.stringify towards a subgraph, body validation), overflows the stack on it.
 */
export const MAX_JSON_NESTING = 64;

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const OPENERS = new Set([0x5b, 0x7b]); // [ {
const CLOSERS = new Set([0x5d, 0x7d]); // ] }

/**
 * Refuses JSON text nested deeper than MAX_JSON_NESTING, from its bytes, before it is parsed: the
 * brackets outside strings are counted in one pass (multi-byte UTF-8 never holds an ASCII byte).
 */
export function refuseDeepJson(body: Buffer): void {
  let depth = 0;
  let inString = false;
  for (let index = 0; index < body.length; index++) {
    const byte = body[index];
    if (inString) {
      if (byte === BACKSLASH) index++;
      else if (byte === QUOTE) inString = false;
    } else if (byte === QUOTE) {
      inString = true;
    } else if (OPENERS.has(byte)) {
      if (++depth > MAX_JSON_NESTING) {
        throw AppError.badInput('body', `nests arrays and objects deeper than ${MAX_JSON_NESTING} levels`);
      }
    } else if (CLOSERS.has(byte)) {
      depth--;
    }
  }
}

/**
 * `verify` of `express.json` on every face (REST adapters, gateway, subgraph ports): the body is
 * valid UTF-8 and not absurdly nested, or it is a 400 before it is even parsed.
 */
export function checkJsonBody(req: IncomingMessage, res: unknown, body: Buffer): void {
  refuseInvalidUtf8(req, res, body);
  refuseDeepJson(body);
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
  // A stack of its own rather than recursion: a client chooses how deep a value nests, and the call
  // stack must not be what stops it. Children are pushed last-first, so the first problem in reading
  // order is the one named. A field name is checked when its value is reached (`owner` is where it is).
  const pending: { value: unknown; path: string; key?: { name: string; owner: string } }[] = [{ value, path }];
  for (let next = pending.pop(); next; next = pending.pop()) {
    if (next.key) {
      const keyProblem = unstorable(next.key.name);
      if (keyProblem) return AppError.badInput(next.key.owner || 'body', `field names ${keyProblem}`);
    }
    const { value: item, path: where } = next;
    if (typeof item === 'string') {
      const why = unstorable(item);
      if (why) return AppError.badInput(where || 'body', why);
    } else if (Array.isArray(item)) {
      for (let index = item.length - 1; index >= 0; index--) {
        pending.push({ value: item[index] as unknown, path: `${where}[${index}]` });
      }
    } else if (item && typeof item === 'object') {
      const entries = Object.entries(item as Record<string, unknown>);
      for (let index = entries.length - 1; index >= 0; index--) {
        const [name, child] = entries[index];
        pending.push({ value: child, path: where ? `${where}.${name}` : name, key: { name, owner: where } });
      }
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
