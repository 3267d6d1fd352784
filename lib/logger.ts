import { randomUUID } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { pino, type Logger } from 'pino';
import { pinoHttp } from 'pino-http';
import type { Config } from './config.js';
import { redactRequest } from './log-redaction.js';

export type { Logger };

export const REQUEST_ID_HEADER = 'x-request-id';
const SAFE_REQUEST_ID = /^[\w.:-]{1,128}$/;

export function createLogger(config: Pick<Config, 'env'>, destination?: NodeJS.WritableStream): Logger {
  return pino({
    level: config.env.LOG_LEVEL,
    // Credentials never reach the log, whichever part logs the request.
    redact: {
      paths: ['req.headers.authorization', 'req.headers.cookie', 'req.headers["x-api-key"]', 'res.headers["set-cookie"]'],
      censor: '[redacted]',
    },
  }, destination ?? process.stdout);
}

/**
 * The id of a request: the one `assignRequestId` gave it, else the caller's `X-Request-Id` when it
 * looks sane, else a new one. The same id travels REST adapter -> gateway -> subgraph in that header,
 * so one grep follows a request.
 */
export function requestIdOf(req: IncomingMessage): string {
  if (typeof req.id === 'string') return req.id;
  const incoming = req.headers[REQUEST_ID_HEADER];
  const value = Array.isArray(incoming) ? incoming[0] : incoming;
  return value && SAFE_REQUEST_ID.test(value) ? value : randomUUID();
}

/**
 * First middleware of every server: settles the request's id once (given or made) and puts it on the
 * answer, so every answer carries it (probes, preflights, 404s and errors too), and the log line, the
 * calls to the gateway and subgraphs and any problem body all name that same id.
 */
export function assignRequestId(req: IncomingMessage, res: ServerResponse, next: () => void): void {
  const id = requestIdOf(req);
  req.id = id;
  res.setHeader(REQUEST_ID_HEADER, id);
  next();
}

/** pino-http middleware that logs one line per request, tagged with the request id. */
export function httpLogger(logger: Logger, component: string) {
  return pinoHttp({
    logger: logger.child({ component }),
    genReqId: (req: IncomingMessage, res: ServerResponse) => {
      const id = requestIdOf(req);
      res.setHeader(REQUEST_ID_HEADER, id);
      return id;
    },
    // No query value and no token in a path reaches the log (lib/log-redaction.ts).
    serializers: { req: redactRequest },
    customLogLevel: (_req, res, error) => (error || res.statusCode >= 500 ? 'error' : res.statusCode >= 400 ? 'warn' : 'info'),
    autoLogging: { ignore: (req) => req.url === '/healthz' || req.url === '/readyz' },
  });
}
