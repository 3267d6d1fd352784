import { context, SpanKind, SpanStatusCode, trace } from '@opentelemetry/api';
import { Counter, Gauge } from 'prom-client';
import { metricsRegistry } from '#lib/observability/metrics.js';
import { tracingOn } from '#lib/observability/tracing.js';

/** The live graph's transports, a closed set of label values (`in-process`: the REST adapters under `npm start`). */
export type LiveTransport = 'websocket' | 'multipart' | 'sse' | 'in-process';

export const openSubscriptions = new Gauge({
  name: 'graphql_subscriptions_open',
  help: 'Subscriptions the gateway is serving now, by transport (websocket, multipart, sse, in-process)',
  labelNames: ['transport'] as const,
  registers: [metricsRegistry],
});

export const deliveredEvents = new Counter({
  name: 'graphql_subscription_events_total',
  help: 'Subscription events delivered to clients, by transport',
  labelNames: ['transport'] as const,
  registers: [metricsRegistry],
});

const tracer = trace.getTracer('live-graph');

/**
 * Counts one delivery and, while tracing is on, gives it a span of its own (a subscription lives for
 * hours: one span for all of it would say nothing about any event). The span is a root, linked to no
 * request, named for the operation so that a trace search finds the deliveries of one stream.
 */
export async function delivered<T>(
  transport: LiveTransport,
  operationName: string | undefined,
  deliver: () => Promise<T> | T,
): Promise<T> {
  deliveredEvents.inc({ transport });
  if (!tracingOn()) return deliver();
  const span = tracer.startSpan(
    'graphql.subscription.delivery',
    { kind: SpanKind.SERVER, attributes: { 'graphql.operation.name': operationName ?? '', transport } },
    context.active(),
  );
  try {
    return await deliver();
  } catch (error) {
    span.recordException(error as Error);
    span.setStatus({ code: SpanStatusCode.ERROR });
    throw error;
  } finally {
    span.end();
  }
}
