import { randomUUID } from 'node:crypto';
import type { IncomingMessage, Server } from 'node:http';
import type { Duplex } from 'node:stream';
import { GraphQLError, type ExecutionArgs, type ExecutionResult, type FormattedExecutionResult } from 'graphql';
import { CloseCode, type Context } from 'graphql-ws';
import { useServer, type Extra } from 'graphql-ws/use/ws';
import { WebSocketServer, type WebSocket } from 'ws';
import type { Config } from '#lib/config.js';
import { gatewayClientOf } from '#lib/http/client-address.js';
import { REQUEST_ID_HEADER } from '#lib/observability/logger.js';
import { forwardHeadersOf } from '#lib/rest/graphql-client.js';
import { stoppable, type Stoppable } from '#lib/stoppable.js';
import type { LiveAnswer, LiveGraph } from './live-graph.js';
import { delivered } from './live-metrics.js';
import { MAX_BUFFERED_BYTES, SLOW_READER_MS } from './stream-writer.js';
import type { LiveCaller } from './subgraph-streams.js';
import { ConnectionSlots } from './subscription-limits.js';

/** The close code that tells a graphql-ws client the server restarts: it reconnects (RFC 6455 "Service Restart"). */
export const SERVICE_RESTART = 1012;
/** How often the connection is pinged; a client that answers no ping within as long is cut (graphql-ws's keepalive). */
const PING_MS = 12_000;
/** How often a connection's unsent bytes are looked at (the slow-reader rule). */
const BACKLOG_CHECK_MS = 5_000;

/** What one WebSocket connection carries: its caller, from the upgrade and `connection_init`, and its subscriptions. */
interface Connection {
  caller: LiveCaller;
  slots: ConnectionSlots;
}

/** What `onSubscribe` hands to graphql-ws's execute or subscribe: the live graph's answer. */
interface Planned {
  answer: Exclude<LiveAnswer, { kind: 'refused' }>;
  caller: LiveCaller;
}

type WsContext = Context<Record<string, unknown> | undefined, Extra>;

/**
 * The `graphql-transport-ws` protocol on the gateway's `/graphql` (graphql-ws's server on `ws`). The
 * upgrade is refused when it carries an `Origin` outside `CORS_ORIGINS` (a page elsewhere would ride
 * the user's cookies otherwise: WebSocket has no CORS). Credentials come from `connection_init`
 * (`Authorization`, `X-API-Key`, any case) over those of the upgrade (`Cookie`, `Authorization`).
 * Answers `close()`: ends every connection with 1012, so clients reconnect with their last cursor.
 */
export function serveWebSocketSubscriptions(
  server: Server,
  live: LiveGraph,
  config: Pick<Config, 'corsOrigins' | 'env'>,
): { close(): Promise<void> } {
  const allowed = new Set(config.corsOrigins);
  const wss = new WebSocketServer({ noServer: true, maxPayload: config.env.BODY_LIMIT_BYTES });
  const connections = new WeakMap<object, Connection>();

  const onUpgrade = (req: IncomingMessage, socket: Duplex, head: Buffer) => {
    const path = (req.url ?? '').split('?')[0];
    if (path !== '/graphql') return void socket.destroy();
    const origin = req.headers.origin;
    if (origin !== undefined && !allowed.has(origin)) {
      socket.end('HTTP/1.1 403 Forbidden\r\nConnection: close\r\nContent-Length: 0\r\n\r\n');
      return;
    }
    wss.handleUpgrade(req, socket, head, (ws) => wss.emit('connection', ws, req));
  };
  server.on('upgrade', onUpgrade);

  wss.on('connection', (ws: WebSocket) => {
    // Cut a connection whose unsent messages keep piling up: the client reads nothing.
    let stalledSince: number | undefined;
    const backlog = setInterval(() => {
      if (ws.bufferedAmount > MAX_BUFFERED_BYTES) return ws.terminate();
      if (ws.bufferedAmount === 0) stalledSince = undefined;
      else if (stalledSince === undefined) stalledSince = Date.now();
      else if (Date.now() - stalledSince >= SLOW_READER_MS) ws.terminate();
    }, BACKLOG_CHECK_MS);
    backlog.unref();
    const forget = live.streams.track({ endForRestart: () => ws.close(SERVICE_RESTART, 'Service Restart') });
    ws.once('close', () => {
      clearInterval(backlog);
      forget();
    });
  });

  useServer(
    {
      onConnect(ctx: WsContext) {
        if (live.streams.closing) return false;
        const req = ctx.extra.request;
        connections.set(ctx, {
          caller: {
            forwardHeaders: { ...forwardHeadersOf(req.headers), ...credentialsOf(ctx.connectionParams) },
            requestId: headerOf(req, REQUEST_ID_HEADER) ?? randomUUID(),
            clientAddress: gatewayClientOf(req, config.env.SUBGRAPH_TOKEN),
          },
          slots: new ConnectionSlots(),
        });
        return true;
      },
      onSubscribe(ctx: WsContext, _id, payload) {
        const connection = connections.get(ctx);
        if (!connection) return [new GraphQLError('connection not initialised')];
        const caller = { ...connection.caller, requestId: `${connection.caller.requestId}:${_id}` };
        const answer = live.open(payload, caller, { transport: 'websocket', connection: connection.slots });
        if (answer.kind === 'refused') {
          return answer.errors.map((error) => new GraphQLError(error.message, { extensions: error.extensions }));
        }
        const { admitted } = answer;
        const planned: Planned = { answer, caller };
        return {
          schema: undefined as never,
          document: admitted.document,
          operationName: admitted.operationName,
          variableValues: admitted.variables,
          contextValue: planned,
        } satisfies ExecutionArgs;
      },
      // Results leave the live graph formatted already (masked, codes kept): sent as they are.
      onNext: (_ctx, _id, _payload, _args, result) => result as FormattedExecutionResult,
      execute: (args: ExecutionArgs) => {
        const { answer, caller } = args.contextValue as Planned;
        if (answer.kind !== 'operation') return { data: null };
        return live.runOperation(answer.admitted, caller) as Promise<ExecutionResult>;
      },
      subscribe: (args: ExecutionArgs) => {
        const { answer } = args.contextValue as Planned;
        if (answer.kind !== 'stream') return { data: null };
        return results(answer);
      },
    },
    wss,
    PING_MS,
  );

  return {
    async close() {
      server.off('upgrade', onUpgrade);
      for (const ws of wss.clients) ws.close(SERVICE_RESTART, 'Service Restart');
      await new Promise<void>((resolve) => wss.close(() => resolve()));
    },
  };
}

/**
 * The stream's results for graphql-ws, each delivery counted and traced. A `complete` or a closed
 * connection returns them: that ends the live graph's stream at once, and the wait for it with it.
 */
function results(answer: Extract<LiveAnswer, { kind: 'stream' }>): Stoppable<ExecutionResult> {
  return stoppable(
    () => deliveries(answer),
    () => void answer.events.return(),
  );
}

async function* deliveries(answer: Extract<LiveAnswer, { kind: 'stream' }>): AsyncGenerator<ExecutionResult> {
  try {
    for await (const event of answer.events) {
      yield await delivered('websocket', answer.operationName, () => event.result as ExecutionResult);
    }
  } finally {
    await answer.events.return();
  }
}

/** `Authorization` and `X-API-Key` of a `connection_init` payload, whatever the case of their names. */
function credentialsOf(params: Record<string, unknown> | undefined): Record<string, string> {
  const picked: Record<string, string> = {};
  for (const [name, value] of Object.entries(params ?? {})) {
    const lower = name.toLowerCase();
    if ((lower === 'authorization' || lower === 'x-api-key') && typeof value === 'string') picked[lower] = value;
  }
  return picked;
}

function headerOf(req: IncomingMessage, name: string): string | undefined {
  const value = req.headers[name];
  return typeof value === 'string' ? value : undefined;
}

export { CloseCode };
