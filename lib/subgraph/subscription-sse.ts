import type express from 'express';
import { print, type ExecutionResult } from 'graphql';
import { createHandler } from 'graphql-sse/lib/use/express';
import type { SubgraphRequest } from './subgraph-operation.js';
import type { Subscribe } from './subscriptions.js';

/** True when the request asks for an event stream (GraphQL over SSE), as a subscription over HTTP does. */
export function wantsEventStream(req: express.Request): boolean {
  return (req.headers.accept ?? '').split(',').some((type) => type.trim().startsWith('text/event-stream'));
}

/**
 * A subgraph's subscriptions over GraphQL over SSE (graphql-sse's distinct connections mode), at
 * its `/graphql`, for a gateway in another process or Hive Gateway: the operation runs through the
 * same `subscribe` as in process (formatting, masking, the caller checked per event), with the
 * context made from the request's headers as a query's is. The handler is put behind the same gates
 * as queries (SUBGRAPH_TOKEN, cross-site refusal, body limits, query limits in `subscribe`).
 */
export function eventStreamSubscriptions(
  subscribe: Subscribe,
  requestOf: (req: express.Request) => SubgraphRequest,
): express.RequestHandler {
  // The caller's leaving, by request: graphql-sse ends a stream only when it next writes to a closed
  // response, so a stream whose gateway left stayed subscribed (following the event log) until an
  // event came for it, which for a quiet stream is never.
  const leaving = new WeakMap<express.Request, AbortSignal>();
  const handler = createHandler({
    // graphql-sse types the stream as graphql-js's own generator; it only iterates it and returns it.
    onSubscribe: (req, params) =>
      subscribe(
        {
          query: typeof params.query === 'string' ? params.query : print(params.query),
          variables: params.variables ?? undefined,
          operationName: params.operationName ?? undefined,
        },
        requestOf(req.raw as express.Request),
        leaving.get(req.raw as express.Request),
      ) as unknown as AsyncGenerator<ExecutionResult>,
  });
  return (req, res, next) => {
    if (!wantsEventStream(req)) return next();
    const left = new AbortController();
    res.once('close', () => left.abort());
    leaving.set(req, left.signal);
    void handler(req, res).catch(next);
  };
}
