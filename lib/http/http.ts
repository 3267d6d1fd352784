import http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { ErrorRequestHandler, Express, Request, Response } from 'express';
import { RETRY_AFTER_SECONDS, serviceUnavailable } from './availability.js';
import { ErrorCode, HTTP_STATUS, INTERNAL_MESSAGE, problemFor, requestReadError } from '../errors.js';
import type { Logger } from '../observability/logger.js';
import { gracefulClose } from './shutdown.js';

export interface RunningServer {
  readonly port: number;
  readonly url: string;
  readonly server: http.Server;
  close(): Promise<void>;
}

export { DRAIN_TIMEOUT_MS } from './shutdown.js';

/**
 * A part's port opened before the part can serve (its subgraphs wait for the database): `/healthz`
 * answers 200 at once, `/readyz` 503 and anything else 503 with `Retry-After`, so a start that waits
 * for PostgreSQL is alive to its probes on every port, and not ready. `listen` hands it the part's app.
 */
export interface WaitingPort {
  readonly port: number;
  /** Serves `app` from now on, on the same socket (no moment when the port refuses connections). */
  serve(app: Express | http.RequestListener, path?: string): RunningServer;
  close(): Promise<void>;
}

/** Where a part listens: a port to open (0: any free port), or one opened already while it waited. */
export type PartPort = number | WaitingPort;

/** `graphqlPath`: where the part will serve GraphQL, answered meanwhile in GraphQL's shape, as a waiting subgraph does. */
export async function openWaitingPort(port: number, host = '0.0.0.0', graphqlPath?: string): Promise<WaitingPort> {
  let handler: http.RequestListener = (req, res) => answerStarting(req, res, graphqlPath);
  const dispatch: http.RequestListener = (req, res) => handler(req, res);
  const running = await listen(dispatch, port, host);
  return {
    port: running.port,
    serve(app, path = '') {
      handler = app as http.RequestListener;
      return { ...running, url: `http://localhost:${running.port}${path}` };
    },
    close: () => running.close(),
  };
}

const STARTING = 'The service is starting: its database is not ready yet';

function answerStarting(req: http.IncomingMessage, res: http.ServerResponse, graphqlPath?: string): void {
  const path = (req.url ?? '').split('?')[0];
  if (path === '/healthz' || path === '/readyz') {
    const alive = path === '/healthz';
    res
      .writeHead(alive ? 200 : 503, { 'content-type': 'application/json; charset=utf-8', 'cache-control': 'no-store' })
      .end(JSON.stringify({ status: alive ? 'ok' : 'not ready' }));
    return;
  }
  const graphql = graphqlPath !== undefined && path === graphqlPath;
  const problem = problemFor(ErrorCode.SERVICE_UNAVAILABLE, STARTING);
  res
    .writeHead(503, {
      'content-type': graphql ? 'application/json; charset=utf-8' : 'application/problem+json; charset=utf-8',
      'retry-after': String(RETRY_AFTER_SECONDS),
      'cache-control': 'no-store',
    })
    .end(
      JSON.stringify(
        graphql ? { errors: [{ message: STARTING, extensions: serviceUnavailable().extensions }] } : problem,
      ),
    );
}

/** Starts `app` on `port` (0: any free port; a waiting port: serves it there) and returns a handle that drains on close. */
export function listen(
  app: Express | http.RequestListener,
  port: PartPort,
  host = '0.0.0.0',
  path = '',
): Promise<RunningServer> {
  if (typeof port !== 'number') return Promise.resolve(port.serve(app, path));
  const server = http.createServer(app as http.RequestListener);
  // Keep-alive sockets from the gateway outlive single requests; close them promptly on shutdown.
  server.keepAliveTimeout = 65_000;
  const close = gracefulClose(server);
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => {
      server.off('error', reject);
      const actualPort = (server.address() as AddressInfo).port;
      resolve({
        port: actualPort,
        url: `http://localhost:${actualPort}${path}`,
        server,
        close,
      });
    });
  });
}

/** Liveness and readiness probes, the same on every part of the platform. */
export function addProbes(app: Express, isReady: () => boolean | Promise<boolean>): void {
  app.get('/healthz', (_req: Request, res: Response) => {
    res.json({ status: 'ok' });
  });
  app.get('/readyz', async (_req: Request, res: Response) => {
    const ready = await isReady();
    res.status(ready ? 200 : 503).json({ status: ready ? 'ready' : 'not ready' });
  });
}

/**
 * For the GraphQL endpoints (gateway and subgraphs): a request that fails before Apollo sees it
 * (malformed JSON, a body over the limit) still gets a GraphQL-shaped JSON answer, never Express's
 * HTML page with a stack trace.
 */
export function graphqlRequestErrorHandler(log: Logger): ErrorRequestHandler {
  return (error, _req, res, next) => {
    if (res.headersSent) return next(error);
    const unreadable = requestReadError(error);
    if (!unreadable) log.error({ err: error }, 'request failed before GraphQL');
    const code = unreadable?.code ?? ErrorCode.INTERNAL_SERVER_ERROR;
    const fields = unreadable?.fields.length ? { errors: unreadable.fields } : {};
    res
      .status(HTTP_STATUS[code])
      .json({ errors: [{ message: unreadable?.message ?? INTERNAL_MESSAGE, extensions: { code, ...fields } }] });
  };
}
