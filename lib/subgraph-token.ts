import { createHash, timingSafeEqual } from 'node:crypto';
import type { RequestHandler } from 'express';
import { ErrorCode, HTTP_STATUS } from './errors.js';

/** The header the gateway sends its shared secret in (`SUBGRAPH_TOKEN`), to subgraphs deployed apart. */
export const SUBGRAPH_TOKEN_HEADER = 'x-subgraph-token';

const digest = (text: string) => createHash('sha256').update(text).digest();

/**
 * With `SUBGRAPH_TOKEN` set, a subgraph answers only callers that send it: the gateway. Compared in
 * constant time (both sides hashed first, so neither the value nor its length leaks through timing).
 * Without it, the subgraph listens on loopback (`SUBGRAPH_HOST`; production refuses anything else).
 */
export function requireSubgraphToken(token: string | undefined): RequestHandler {
  const expected = token ? digest(token) : undefined;
  return (req, res, next) => {
    if (!expected) return next();
    const sent = req.headers[SUBGRAPH_TOKEN_HEADER];
    const value = Array.isArray(sent) ? sent[0] : sent;
    if (value && timingSafeEqual(digest(value), expected)) return next();
    res.status(HTTP_STATUS[ErrorCode.UNAUTHENTICATED]).json({
      errors: [{ message: 'This subgraph answers the gateway only', extensions: { code: ErrorCode.UNAUTHENTICATED } }],
    });
  };
}
