import { createHash, timingSafeEqual } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import type { RequestHandler } from 'express';
import { ErrorCode, HTTP_STATUS } from '../errors.js';

/** The header the gateway sends its shared secret in (`SUBGRAPH_TOKEN`), to subgraphs deployed apart. */
export const SUBGRAPH_TOKEN_HEADER = 'x-subgraph-token';

const digest = (text: string) => createHash('sha256').update(text).digest();

/** Whether a request carries the shared `token` (a part of the platform calling another), compared in constant time. */
export function carriesSubgraphToken(req: IncomingMessage, token: string): boolean {
  const sent = req.headers[SUBGRAPH_TOKEN_HEADER];
  const value = Array.isArray(sent) ? sent[0] : sent;
  return Boolean(value) && timingSafeEqual(digest(value!), digest(token));
}

/**
 * With `SUBGRAPH_TOKEN` set, a subgraph answers only callers that send it: the gateway. Compared in
 * constant time (both sides hashed first, so neither the value nor its length leaks through timing).
 * Without it, the subgraph listens on loopback (`SUBGRAPH_HOST`; production refuses anything else).
 */
export function requireSubgraphToken(token: string | undefined): RequestHandler {
  return (req, res, next) => {
    if (!token || carriesSubgraphToken(req, token)) return next();
    res.status(HTTP_STATUS[ErrorCode.UNAUTHENTICATED]).json({
      errors: [{ message: 'This subgraph answers the gateway only', extensions: { code: ErrorCode.UNAUTHENTICATED } }],
    });
  };
}
