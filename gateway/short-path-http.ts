import { createRequire } from 'node:module';
import type { Request, RequestHandler, Response } from 'express';
import type { GatewayContext } from '#lib/rest/graphql-client.js';
import type { ShortPaths } from './short-path.js';

/**
 * The short path over HTTP: a POST to `/graphql` of a fixed text (a trusted document, by `documentId`
 * or as text, or a REST adapter's operation sent by an adapter deployed apart) is answered here when
 * the gateway has a short path for it, with the bytes Apollo Server's HTTP layer would write: status
 * 200, the content type it negotiates from `Accept`, and `{ errors, data, extensions }` in that order
 * as JSON with a final newline. Anything else about the request (a GET, APQ `extensions`, a batch,
 * another `operationName`, an `Accept` Apollo would refuse) goes on to Apollo Server as before.
 */
export function serveShortPaths(
  shortPaths: ShortPaths,
  contextOf: (req: Request, res: Response) => GatewayContext,
): RequestHandler {
  return (req, res, next) => {
    if (req.method !== 'POST') return next();
    const body = req.body as Record<string, unknown> | undefined;
    if (!isRecord(body) || typeof body.query !== 'string' || (body.extensions ?? null) !== null) return next();
    const variables = body.variables ?? undefined;
    const operationName = body.operationName ?? undefined;
    if (
      (variables !== undefined && !isRecord(variables)) ||
      (operationName !== undefined && typeof operationName !== 'string')
    )
      return next();
    const contentType = contentTypeFor(req.headers.accept);
    if (!contentType) return next();
    const answer = shortPaths.run(body.query, variables, contextOf(req, res), operationName);
    if (!answer) return next();
    answer.then((result) => {
      const ordered = { errors: result.errors, data: result.data, extensions: result.extensions };
      res.status(200).setHeader('content-type', contentType);
      res.send(`${JSON.stringify(ordered)}\n`);
    }, next);
  };
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return !!value && typeof value === 'object' && !Array.isArray(value) && !Buffer.isBuffer(value);
}

/** Apollo Server's `MEDIA_TYPES` for a single result, in its order of preference. */
const SINGLE_RESULT_TYPES = [
  'application/json; charset=utf-8',
  'application/graphql-response+json; charset=utf-8',
  'application/json; callbackSpec=1.0; charset=utf-8',
];

type NegotiatorClass = new (request: { headers: { accept?: string } }) => {
  mediaType(available: string[]): string | undefined;
};

// The negotiator Apollo Server itself resolves, so that both choose the same type for the same header.
const requireFromApollo = createRequire(createRequire(import.meta.url).resolve('@apollo/server'));
const Negotiator = requireFromApollo('negotiator') as NegotiatorClass;

/** Accept headers seen, with the type chosen (a client sends the same one every time); bounded. */
const chosen = new Map<string, string | null>();

/** The content type Apollo Server answers a single result with (`chooseContentTypeForSingleResultResponse`), or null. */
function contentTypeFor(accept: string | undefined): string | null {
  if (!accept) return SINGLE_RESULT_TYPES[0];
  let type = chosen.get(accept);
  if (type === undefined) {
    type = new Negotiator({ headers: { accept } }).mediaType(SINGLE_RESULT_TYPES) ?? null;
    if (chosen.size >= 100) chosen.clear();
    chosen.set(accept, type);
  }
  return type;
}
