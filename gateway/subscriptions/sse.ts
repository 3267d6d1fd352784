import type { RequestHandler } from 'express';
import { getOperationAST, OperationTypeNode, parse } from 'graphql';
import { ErrorCode } from '#lib/errors.js';
import { httpCallerOf, httpParamsOf } from './http-caller.js';
import type { LiveGraph } from './live-graph.js';
import { delivered } from './live-metrics.js';
import { StreamWriter } from './stream-writer.js';

/** How often an idle SSE stream sends a comment, so that proxies and browsers keep it open. */
const KEEPALIVE_MS = 12_000;

/** An SSE field's value on one line: JSON has no raw newline, a cursor none either; this holds that. */
const oneLine = (value: string) => value.replace(/[\r\n]/g, '');

/** A media range of JSON in an `Accept` header (Apollo Server answers those). */
const ACCEPTS_JSON = /application\/(graphql-response\+json|graphql\+json|json)\b/i;

/**
 * Whether a request is this transport's: it asks for `text/event-stream`, and when it accepts JSON as
 * well it is a subscription. urql sends `text/event-stream` beside JSON with every query (in case the
 * answer is incremental): a query or mutation that accepts JSON stays with Apollo Server and is
 * answered as JSON, as before the live graph. A document that does not parse goes there too, to be
 * rejected as every other.
 */
function takesEventStream(accept: string | undefined, params: Record<string, unknown>): boolean {
  if (!accept?.includes('text/event-stream')) return false;
  if (!ACCEPTS_JSON.test(accept)) return true;
  if (typeof params.query !== 'string') return false;
  try {
    const name = typeof params.operationName === 'string' ? params.operationName : undefined;
    return getOperationAST(parse(params.query), name)?.operation === OperationTypeNode.SUBSCRIPTION;
  } catch {
    return false;
  }
}

/**
 * GraphQL over SSE, distinct-connections mode (the protocol graphql-sse's client speaks): a POST, or a
 * GET with `query`, asking for `text/event-stream` is answered as one event stream: `event: next` with
 * each result as `data`, then `event: complete`. Each `next` of a stream with cursors carries the
 * event's cursor as `id:`, so a browser's EventSource (or graphql-sse's client) that reconnects with
 * `Last-Event-ID` resumes after it. A query or mutation asked for so answers one `next`.
 */
export function serveSseSubscriptions(live: LiveGraph, subgraphTokens: readonly string[]): RequestHandler {
  return (req, res, next) => {
    if ((req.method !== 'POST' && req.method !== 'GET') || !takesEventStream(req.get('accept'), httpParamsOf(req))) {
      return next();
    }
    const caller = httpCallerOf(req, subgraphTokens);
    const lastEventId = req.get('last-event-id') || undefined;
    const answer = live.open(httpParamsOf(req), caller, { transport: 'sse', lastEventId });
    if (answer.kind === 'refused') {
      res.status(answer.status).json({ errors: answer.errors });
      return;
    }
    if (answer.kind === 'operation' && req.method === 'GET' && answer.admitted.type === OperationTypeNode.MUTATION) {
      res
        .status(405)
        .set('allow', 'POST')
        .json({
          errors: [
            {
              message: 'A GET never runs a mutation: send it as a POST',
              extensions: { code: ErrorCode.METHOD_NOT_ALLOWED },
            },
          ],
        });
      return;
    }
    res.writeHead(200, {
      'content-type': 'text/event-stream; charset=utf-8',
      // no-transform: the compression middleware would hold events back to fill its blocks.
      'cache-control': 'no-store, no-transform',
      connection: 'keep-alive',
      'x-accel-buffering': 'no',
    });
    const writer = new StreamWriter(res);
    // A first comment at once: some browsers show no stream before its first bytes.
    writer.write(':\n\n');
    const send = (event: 'next' | 'complete', data?: unknown, id?: string) =>
      writer.write(
        `${id ? `id: ${oneLine(id)}\n` : ''}event: ${event}\ndata:${data === undefined ? '' : ` ${JSON.stringify(data)}`}\n\n`,
      );
    if (answer.kind === 'operation') {
      void live
        .runOperation(answer.admitted, caller)
        .then((result) => {
          send('next', result);
          send('complete');
          writer.end();
        })
        .catch(() => writer.end());
      return;
    }
    const keepalive = setInterval(() => {
      if (!writer.waiting) writer.write(':\n\n');
    }, KEEPALIVE_MS);
    keepalive.unref();
    const { events } = answer;
    // Ended without `complete`: the client's stream is not over, it reconnects with its Last-Event-ID.
    const forget = live.streams.track({ endForRestart: () => writer.end() });
    res.once('close', () => {
      clearInterval(keepalive);
      forget();
      void events.return();
    });
    void (async () => {
      for await (const event of events) {
        if (!writer.open) break;
        await delivered('sse', answer.operationName, () => send('next', event.result, event.cursor));
      }
      send('complete');
      writer.end();
    })().catch(() => writer.end());
  };
}
