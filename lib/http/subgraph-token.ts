import { createHash, timingSafeEqual } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import type { RequestHandler } from 'express';
import { ErrorCode, HTTP_STATUS } from '../errors.js';

/** The header the gateway sends its shared secret in (`SUBGRAPH_TOKEN`), to subgraphs deployed apart. */
export const SUBGRAPH_TOKEN_HEADER = 'x-subgraph-token';

const digest = (text: string) => createHash('sha256').update(text).digest();

/**
 * Whether a request carries one of the shared `tokens` (a part of the platform calling another),
 * compared in constant time. Any of them counts: during a rotation some callers still send the old one.
 */
export function carriesSubgraphToken(req: IncomingMessage, tokens: readonly string[]): boolean {
  const sent = req.headers[SUBGRAPH_TOKEN_HEADER];
  const value = Array.isArray(sent) ? sent[0] : sent;
  if (!value) return false;
  const given = digest(value);
  // Every token is compared, so the time taken does not say which one matched.
  return tokens.map((token) => timingSafeEqual(given, digest(token))).includes(true);
}

/**
 * With `SUBGRAPH_TOKEN` set, a subgraph answers only callers that send one of its tokens: the gateway. Compared in
 * constant time (both sides hashed first, so neither the value nor its length leaks through timing).
 * Without it, the subgraph listens on loopback (`SUBGRAPH_HOST`; production refuses anything else).
 */
export function requireSubgraphToken(tokens: readonly string[]): RequestHandler {
  return (req, res, next) => {
    if (!tokens.length || carriesSubgraphToken(req, tokens)) return next();
    res.status(HTTP_STATUS[ErrorCode.UNAUTHENTICATED]).json({
      errors: [{ message: 'This subgraph answers the gateway only', extensions: { code: ErrorCode.UNAUTHENTICATED } }],
    });
  };
}
