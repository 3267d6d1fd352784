import { randomUUID } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { createRequire } from 'node:module';
import { pino, type Logger } from 'pino';
import { pinoHttp } from 'pino-http';
import type { Config } from '../config.js';
import { errorLogFields, requestLogFields, responseLogFields } from './log-redaction.js';
import { requestTraceFields, traceFields, tracingOn } from './tracing.js';

export type { Logger };

export const REQUEST_ID_HEADER = 'x-request-id';
const SAFE_REQUEST_ID = /^[\w.:-]{1,128}$/;

/**
 * The process's logger: one JSON object per line, or pino-pretty's readable lines (loaded only then),
 * as `Config.logFormat` decides (`LOG_FORMAT`; by default readable on a terminal in development). While tracing
 * is on, every line written inside a span carries its `trace_id` and `span_id`.
 *
 * JSON goes to stdout asynchronously: Node writes to a pipe or a terminal synchronously on Linux, so
 * every request's log line would block the event loop for a write system call (and for as long as a
 * slow reader leaves the pipe full). pino flushes what is left when the process exits.
 */
export function createLogger(config: Pick<Config, 'env' | 'logFormat'>, destination?: NodeJS.WritableStream): Logger {
  return pino(
    {
      level: config.env.LOG_LEVEL,
      // Credentials never reach the log, whichever part logs a request or an answer: under these keys
      // only the fields of an allowlist are written (lib/observability/log-redaction.ts).
      // Errors likewise: type, message, code and causes, never a stack or a statement's SQL.
      serializers: { err: errorLogFields, req: requestLogFields, res: responseLogFields },
      mixin: (fields: object, _level: number, logger: Logger) => {
        if (!tracingOn() || 'trace_id' in fields || 'trace_id' in logger.bindings()) return {};
        return traceFields();
      },
    },
    // A destination other than stdout is a stream some code reads: JSON there, unless LOG_FORMAT asks otherwise.
    (destination ? (config.env.LOG_FORMAT ?? 'json') : config.logFormat) === 'pretty'
      ? prettyStream(destination)
      : (destination ?? pino.destination({ dest: 1, sync: false })),
  );
}

function prettyStream(destination?: NodeJS.WritableStream): NodeJS.WritableStream {
  const require = createRequire(import.meta.url);
  const { PinoPretty } = require('pino-pretty') as typeof import('pino-pretty');
  return PinoPretty({
    colorize: destination === undefined && process.stdout.isTTY,
    translateTime: 'SYS:HH:MM:ss.l',
    destination: destination ?? 1,
    sync: true,
  });
}

/**
 * An Apollo logger on `log` that keeps each message on one line: Apollo Gateway writes some with
 * `\n\t` inside ("Gateway successfully loaded schema.\n\t* Mode: unmanaged").
 */
export function oneLineLogger(log: Logger) {
  const oneLine = (message: unknown) => (typeof message === 'string' ? message.replace(/\s*\n\s*/g, ' ') : message);
  return {
    debug: (message?: unknown) => log.debug(oneLine(message)),
    info: (message?: unknown) => log.info(oneLine(message)),
    warn: (message?: unknown) => log.warn(oneLine(message)),
    error: (message?: unknown) => log.error(oneLine(message)),
  };
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
    // The request's trace (tracing on): bound once, when the request starts. Without one, nothing:
    // pino-http makes a child logger of whatever object it is given, even an empty one.
    customProps: ((req: IncomingMessage) => {
      const fields = requestTraceFields(req);
      return fields.trace_id ? fields : undefined;
    }) as (req: IncomingMessage) => object,
    // No header, no query value and no token in a path reaches the log (lib/observability/log-redaction.ts).
    // The serializers read the request and the answer themselves: pino-std-serializers' wrappers would
    // first copy every header of both, for each request, only for these to keep five fields.
    serializers: { req: requestLogFields, res: responseLogFields },
    wrapSerializers: false,
    customLogLevel: (_req, res, error) =>
      error || res.statusCode >= 500 ? 'error' : res.statusCode >= 400 ? 'warn' : 'info',
    autoLogging: { ignore: (req) => req.url === '/healthz' || req.url === '/readyz' },
  });
}
