import type { IncomingMessage, ServerResponse } from 'node:http';
import {
  context,
  propagation,
  ROOT_CONTEXT,
  SpanKind,
  SpanStatusCode,
  trace,
  type Context,
  type Span,
} from '@opentelemetry/api';
import { suppressTracing } from '@opentelemetry/core';
import { defaultFieldResolver, type GraphQLFieldResolver, type GraphQLSchema } from 'graphql';
import { MapperKind, mapSchema } from '@graphql-tools/utils';
import type { Config } from '../config.js';
// pino's own type: the logger module itself asks this one for trace ids.
import type { Logger } from 'pino';
import { routePatternOf } from './route-pattern.js';

/**
 * OpenTelemetry traces, with the SDK's standard variables (`OTEL_EXPORTER_OTLP_ENDPOINT`,
 * `OTEL_SERVICE_NAME`, `OTEL_TRACES_SAMPLER`...). Without an endpoint nothing is loaded: the spans
 * below are made only when `tracingOn()`, and `@opentelemetry/api` alone is a no-op.
 *
 * Spans are made by hand rather than by monkey-patching instrumentations: the code is ES modules
 * (patching them needs a loader hook), and the same calls work when the gateway runs a subgraph
 * in its own process, where context travels by AsyncLocalStorage instead of `traceparent`.
 * One REST request gives: the REST part's server span -> `gateway.request` / `gateway.plan` /
 * `gateway.fetch` (Apollo Gateway's own spans) -> the subgraph's server span (over HTTP) -> its
 * operation span -> a span per resolver that waits on something -> a span per SQL statement.
 */
const tracer = trace.getTracer('platform');
let enabled = false;

export function tracingOn(): boolean {
  return enabled;
}

export interface Tracing {
  /** Sends what is buffered (tests, shutdown). */
  flush(): Promise<void>;
  close(): Promise<void>;
}

/**
 * Starts OpenTelemetry's trace SDK when an OTLP endpoint is configured; `undefined` (and nothing of
 * the SDK loaded) otherwise.
 *
 * Only the trace SDK and the two OTLP/HTTP exporters are installed, not `@opentelemetry/sdk-node`:
 * that one depends on every exporter (gRPC, protobuf and HTTP, for traces, metrics and logs), a
 * quarter of a gigabyte for what is, here, traces only. They are of the 1.x line (SDK 1.30, exporters
 * 0.57), the one Apollo Gateway depends on: with one line of `@opentelemetry/*` the install holds a
 * single copy of each, where a second line would nest a copy of core, resources and semantic
 * conventions under every package of the other. What sdk-node did for traces is done the same way:
 * the exporters read `OTEL_EXPORTER_OTLP_*` (endpoint, headers, timeout, compression), the tracer
 * provider `OTEL_TRACES_SAMPLER*`, `OTEL_*_LIMIT` and `OTEL_PROPAGATORS` (W3C trace context and
 * baggage by default), the batch processor `OTEL_BSP_*`, the env detector `OTEL_SERVICE_NAME` and
 * `OTEL_RESOURCE_ATTRIBUTES`; context travels by AsyncLocalStorage.
 */
export async function startTracing(config: Config, logger: Logger, serviceName: string): Promise<Tracing | undefined> {
  const env = config.env;
  if (!env.OTEL_EXPORTER_OTLP_ENDPOINT && !env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT) return undefined;
  if (env.OTEL_SDK_DISABLED?.toLowerCase() === 'true') return undefined;
  const protocol = env.OTEL_EXPORTER_OTLP_TRACES_PROTOCOL ?? env.OTEL_EXPORTER_OTLP_PROTOCOL ?? 'http/protobuf';
  const [{ NodeTracerProvider, BatchSpanProcessor }, { OTLPTraceExporter }, resources, { ATTR_SERVICE_NAME }] =
    await Promise.all([
      import('@opentelemetry/sdk-trace-node'),
      protocol === 'http/json'
        ? import('@opentelemetry/exporter-trace-otlp-http')
        : import('@opentelemetry/exporter-trace-otlp-proto'),
      import('@opentelemetry/resources'),
      import('@opentelemetry/semantic-conventions'),
    ]);
  const resource = resources.Resource.default()
    .merge(
      resources.detectResourcesSync({
        detectors: [resources.envDetectorSync, resources.processDetectorSync, resources.hostDetectorSync],
      }),
    )
    // OTEL_SERVICE_NAME wins over this default, as everywhere in OpenTelemetry.
    .merge(new resources.Resource({ [ATTR_SERVICE_NAME]: env.OTEL_SERVICE_NAME ?? serviceName }));
  const provider = new NodeTracerProvider({
    resource,
    spanProcessors: [new BatchSpanProcessor(new OTLPTraceExporter())],
  });
  provider.register();
  enabled = true;
  logger.child({ component: 'tracing' }).info(
    {
      endpoint: env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT ?? env.OTEL_EXPORTER_OTLP_ENDPOINT,
      protocol,
      serviceName: env.OTEL_SERVICE_NAME ?? serviceName,
    },
    'tracing on: spans go to the OTLP endpoint',
  );
  return {
    flush: () => provider.forceFlush(),
    close: async () => {
      enabled = false;
      await provider.shutdown();
    },
  };
}

/** The trace and span ids of the active span, for log lines (`trace_id`, `span_id`); empty without one. */
export function traceFields(active: Context = context.active()): { trace_id?: string; span_id?: string } {
  const span = trace.getSpan(active);
  if (!span) return {};
  const { traceId, spanId } = span.spanContext();
  return { trace_id: traceId, span_id: spanId };
}

const PROBES = new Set(['/healthz', '/readyz']);

/** Each request's span context, kept for the handlers that run after the body was read (see `resumeTrace`). */
const requestContexts = new WeakMap<IncomingMessage, Context>();

/** `trace_id` and `span_id` of a request's server span, for its HTTP log line; empty without tracing. */
export function requestTraceFields(req: IncomingMessage): { trace_id?: string; span_id?: string } {
  const active = enabled ? requestContexts.get(req) : undefined;
  return active ? traceFields(active) : {};
}

/**
 * Express middleware making the server span of one HTTP request of `part`, as a child of the
 * caller's `traceparent` when it sent one. Ends when the answer is sent, named by route pattern.
 */
export function traceRequests(part: string, mounts: readonly string[] = []) {
  return (req: IncomingMessage, res: ServerResponse, next: () => void): void => {
    // Probes come every few seconds from the kubelet or compose: no trace of their own.
    if (!enabled || PROBES.has(req.url ?? '')) return next();
    const parent = propagation.extract(ROOT_CONTEXT, req.headers);
    const span = tracer.startSpan(
      `${req.method} ${part}`,
      {
        kind: SpanKind.SERVER,
        attributes: {
          'http.request.method': req.method,
          'platform.part': part,
          'platform.request_id': typeof req.id === 'string' ? req.id : '',
        },
      },
      parent,
    );
    const active = trace.setSpan(parent, span);
    requestContexts.set(req, active);
    res.once('close', () => {
      const route = routePatternOf(req, mounts);
      if (route !== 'unmatched') {
        span.setAttribute('http.route', route);
        span.updateName(`${req.method} ${route}`);
      }
      span.setAttribute('http.response.status_code', res.statusCode);
      if (res.statusCode >= 500) span.setStatus({ code: SpanStatusCode.ERROR });
      span.end();
    });
    context.with(active, next);
  };
}

/**
 * Re-enters the request's span context. Reading a body (express.json, busboy) continues in the
 * socket's callbacks, outside the context `traceRequests` entered, so middleware that runs after
 * one is put back in it here.
 */
export function resumeTrace(req: IncomingMessage, _res: ServerResponse, next: () => void): void {
  const active = enabled ? requestContexts.get(req) : undefined;
  if (!active) return next();
  context.with(active, next);
}

/** Runs `work` in the request's span context (a REST route's handler). */
export function inRequestTrace<T>(req: IncomingMessage, work: () => T): T {
  const active = enabled ? requestContexts.get(req) : undefined;
  return active ? context.with(active, work) : work();
}

/** `traceparent` (and `tracestate`) of the active span, to send along with a call to another part. */
export function traceHeaders(): Record<string, string> {
  const carrier: Record<string, string> = {};
  if (enabled) propagation.inject(context.active(), carrier);
  return carrier;
}

/**
 * Runs `work` with no span made inside it, not even by libraries (Apollo Gateway starts its own
 * `gateway.request`, pg-boss its job spans): for readiness checks and background loops, which would
 * otherwise make a trace each time they run.
 */
export function untraced<T>(work: () => Promise<T>): Promise<T> {
  return enabled ? context.with(suppressTracing(context.active()), work) : work();
}

/**
 * Runs `work` in a span of its own, a child of the active one, recording a thrown error. Without an
 * active span (a readiness check's `select 1`, migrations, background jobs) it makes none: such
 * work would otherwise become a trace of one span each.
 */
export async function inChildSpan<T>(
  name: string,
  attributes: Record<string, string | number>,
  work: () => Promise<T>,
): Promise<T> {
  if (!enabled || !trace.getSpan(context.active())) return work();
  return tracer.startActiveSpan(name, { attributes }, async (span) => {
    try {
      return await work();
    } catch (error) {
      span.recordException(error as Error);
      span.setStatus({ code: SpanStatusCode.ERROR });
      throw error;
    } finally {
      span.end();
    }
  });
}

/**
 * A subgraph's operation span, started when Apollo Server receives the operation and ended when it
 * answers; resolvers find it through their GraphQL context object (it cannot be made the active
 * context from a plugin) and hang their spans under it.
 */
const operationSpans = new WeakMap<object, Context>();

export function startOperationSpan(
  contextValue: object,
  name: string,
  attributes: Record<string, string>,
): Span | undefined {
  if (!enabled) return undefined;
  const span = tracer.startSpan(name, { kind: SpanKind.SERVER, attributes });
  operationSpans.set(contextValue, trace.setSpan(context.active(), span));
  return span;
}

/**
 * Wraps every field resolver of `schema` in a span named `Type.field`. Trivial resolvers (a
 * property read, answered at once) are merged into their parent: their span is never ended, so
 * never exported; only resolvers that wait (a query, a DataLoader) appear, with their SQL under
 * them. Applied only while tracing is on.
 */
export function traceResolvers(schema: GraphQLSchema): GraphQLSchema {
  if (!enabled) return schema;
  const rootTypes = new Set(
    [schema.getQueryType(), schema.getMutationType()].filter(Boolean).map((type) => type?.name),
  );
  return mapSchema(schema, {
    [MapperKind.OBJECT_FIELD]: (field, fieldName, typeName) => {
      const resolve: GraphQLFieldResolver<unknown, unknown> = field.resolve ?? defaultFieldResolver;
      const name = `${typeName}.${fieldName}`;
      const alwaysShown = rootTypes.has(typeName);
      return {
        ...field,
        resolve: (source, args, contextValue: unknown, info) => {
          if (!enabled) return resolve(source, args, contextValue, info);
          const parent =
            (contextValue !== null && typeof contextValue === 'object'
              ? operationSpans.get(contextValue)
              : undefined) ?? context.active();
          const span = tracer.startSpan(
            name,
            { attributes: { 'graphql.field.type': typeName, 'graphql.field.name': fieldName } },
            parent,
          );
          let result: unknown;
          try {
            result = context.with(trace.setSpan(parent, span), () => resolve(source, args, contextValue, info));
          } catch (error) {
            span.recordException(error as Error);
            span.setStatus({ code: SpanStatusCode.ERROR });
            span.end();
            throw error;
          }
          if (result instanceof Promise) {
            return result.then(
              (value: unknown) => {
                span.end();
                return value;
              },
              (error: unknown) => {
                span.recordException(error as Error);
                span.setStatus({ code: SpanStatusCode.ERROR });
                span.end();
                throw error;
              },
            );
          }
          if (alwaysShown) span.end();
          return result;
        },
      };
    },
  });
}
