import type { RequestHandler } from 'express';
import type { FormattedExecutionResult } from 'graphql';
import { ErrorCode } from '#lib/errors.js';
import { httpCallerOf, httpParamsOf } from './http-caller.js';
import type { LiveGraph } from './live-graph.js';
import { delivered } from './live-metrics.js';
import { StreamWriter } from './stream-writer.js';

/** How often an idle multipart stream says it is alive: Apollo's protocol asks for at least every 10 s. */
const HEARTBEAT_MS = 8_000;

const CONTENT_TYPE = 'multipart/mixed;boundary="graphql";subscriptionSpec="1.0"';
const PART = '\r\n--graphql\r\nContent-Type: application/json\r\n\r\n';
const END = '\r\n--graphql--\r\n';

/** Whether the client speaks Apollo's multipart subscription protocol (Apollo Client does by default). */
function acceptsMultipartSubscriptions(accept: string | undefined): boolean {
  return accept !== undefined && /multipart\/mixed\s*;[^,]*subscriptionSpec\s*=\s*"?1\.0"?/i.test(accept);
}

/**
 * Apollo's multipart HTTP protocol for subscriptions: a POST whose `Accept` names
 * `multipart/mixed;subscriptionSpec="1.0"` and whose operation is a subscription is answered as one
 * multipart stream: each event a JSON part `{"payload": result}`, a `{}` part while nothing happens,
 * and the closing boundary when the subscription ends. Anything else goes on to Apollo Server.
 */
export function serveMultipartSubscriptions(live: LiveGraph, subgraphTokens: readonly string[]): RequestHandler {
  return (req, res, next) => {
    if (req.method !== 'POST' || !acceptsMultipartSubscriptions(req.get('accept'))) return next();
    const answer = live.open(httpParamsOf(req), httpCallerOf(req, subgraphTokens), { transport: 'multipart' });
    if (answer.kind === 'operation') return next();
    if (answer.kind === 'refused') {
      res.status(answer.status).json({ errors: answer.errors });
      return;
    }
    res.writeHead(200, {
      'content-type': CONTENT_TYPE,
      // no-transform: the compression middleware would hold events back to fill its blocks.
      'cache-control': 'no-store, no-transform',
      // A proxy must pass each part on as it comes (nginx buffers otherwise).
      'x-accel-buffering': 'no',
    });
    const writer = new StreamWriter(res);
    const part = (body: unknown) => writer.write(PART + JSON.stringify(body));
    part({});
    const heartbeat = setInterval(() => {
      if (!writer.waiting) part({});
    }, HEARTBEAT_MS);
    heartbeat.unref();
    const { events } = answer;
    const forget = live.streams.track({
      endForRestart() {
        // A transport-level error ends a multipart subscription for good in Apollo Client; it then
        // reports it, and the application subscribes again with its last cursor.
        part({
          payload: null,
          errors: [
            {
              message: 'The gateway is restarting: subscribe again with your last cursor',
              extensions: { code: ErrorCode.SERVICE_UNAVAILABLE },
            },
          ],
        });
        writer.end(END);
        void events.return();
      },
    });
    res.once('close', () => {
      clearInterval(heartbeat);
      forget();
      void events.return();
    });
    void (async () => {
      for await (const event of events) {
        if (!writer.open) break;
        await delivered('multipart', answer.operationName, () => part({ payload: payloadOf(event.result) }));
      }
      writer.end(END);
    })().catch(() => writer.end(END));
  };
}

/** The part's payload: `data` and `errors` as the protocol names them. */
function payloadOf(result: FormattedExecutionResult): FormattedExecutionResult {
  return { data: result.data ?? null, ...(result.errors?.length ? { errors: result.errors } : {}) };
}
