import http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { ErrorRequestHandler, Express, Request, Response } from 'express';
import { ErrorCode, HTTP_STATUS, INTERNAL_MESSAGE, requestReadError } from './errors.js';
import type { Logger } from './logger.js';
import { gracefulClose } from './shutdown.js';

export interface RunningServer {
  readonly port: number;
  readonly url: string;
  readonly server: http.Server;
  close(): Promise<void>;
}

export { DRAIN_TIMEOUT_MS } from './shutdown.js';

/** Starts `app` on `port` (0: any free port) and returns a handle that drains on close. */
export function listen(
  app: Express | http.RequestListener,
  port: number,
  host = '0.0.0.0',
  path = '',
): Promise<RunningServer> {
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
