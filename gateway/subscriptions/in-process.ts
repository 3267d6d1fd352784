import type { GraphQLResult, SubscriptionExecutor } from '#lib/rest/graphql-client.js';
import { stoppable, whenAborted } from '#lib/stoppable.js';
import type { LiveGraph } from './live-graph.js';
import { deliveredEvents } from './live-metrics.js';

type Request = Parameters<SubscriptionExecutor>[0];
type Context = Parameters<SubscriptionExecutor>[1];

/**
 * The live graph for callers in this process (the REST adapters under `npm start`): the same
 * admission, caps, plan and per-event checks as the gateway's transports, without a socket. A refusal
 * is the first result; a query or mutation sent here answers once, as over SSE. Shutdown ends the
 * results as it ends every transport's stream, so that the caller's own client reconnects with its
 * last cursor. Their `return()` (the REST client left) ends the stream at once, between events too.
 */
export function inProcessSubscriptions(live: LiveGraph): SubscriptionExecutor {
  return (request, context) => stoppable((signal) => results(live, request, context, signal));
}

async function* results(
  live: LiveGraph,
  request: Request,
  context: Context,
  signal: AbortSignal,
): AsyncGenerator<GraphQLResult<Record<string, unknown>>> {
  const caller = {
    forwardHeaders: context.forwardHeaders,
    requestId: context.requestId,
    clientAddress: context.clientAddress,
  };
  const answer = live.open(request, caller, { transport: 'in-process' });
  if (answer.kind === 'refused') {
    yield { errors: answer.errors };
    return;
  }
  if (answer.kind === 'operation') {
    yield await live.runOperation(answer.admitted, caller);
    return;
  }
  const { events } = answer;
  const forget = live.streams.track({ endForRestart: () => void events.return() });
  const forgetSignal = whenAborted(signal, () => void events.return());
  try {
    for await (const event of events) {
      deliveredEvents.inc({ transport: 'in-process' });
      yield event.result;
    }
  } finally {
    forget();
    forgetSignal();
    await events.return();
  }
}
