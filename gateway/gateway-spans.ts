import { createRequire } from 'node:module';
import type { Span, SpanAttributes, Tracer } from '@opentelemetry/api';
import type { FragmentDefinitionNode, GraphQLSchema, OperationDefinitionNode } from 'graphql';
import { tracingOn } from '#lib/observability/tracing.js';

/** Apollo Gateway's view of one operation (`buildOperationContext`), as its plan callback hands it over. */
export interface OperationContext {
  schema: GraphQLSchema;
  operation: OperationDefinitionNode;
  fragments: Record<string, FragmentDefinitionNode>;
}

/**
 * Apollo Gateway's own spans, as the short path opens them: the same tracer (`apollo/gateway-js`, its
 * version), the same names and attributes, nested as `executeQueryPlan` nests them, so that a trace
 * reads the same whichever path ran (`gateway.request` > `gateway.validate`, `gateway.execute` >
 * `gateway.fetch` > the subgraph's operation, `gateway.postprocessing`). `gateway.plan` is opened by
 * the full path only: a short path is only ever taken for an operation planned before.
 */
const require = createRequire(import.meta.url);
const apolloTelemetry = require('@apollo/gateway/dist/utilities/opentelemetry.js') as {
  tracer: Tracer;
  operationContextSpanAttributes(operationContext: OperationContext): SpanAttributes;
};

/** Runs `work` inside a span of Apollo Gateway's name, or straight when tracing is off (no span to make). */
export function inGatewaySpan<T>(
  name: 'gateway.request' | 'gateway.validate' | 'gateway.execute' | 'gateway.fetch' | 'gateway.postprocessing',
  attributes: SpanAttributes,
  work: (span?: Span) => T,
): T {
  if (!tracingOn()) return work();
  return apolloTelemetry.tracer.startActiveSpan(name, { attributes }, (span) => {
    let result: T;
    try {
      result = work(span);
    } catch (error) {
      span.end();
      throw error;
    }
    if (result instanceof Promise) return result.finally(() => span.end()) as T;
    span.end();
    return result;
  });
}

/** The attributes Apollo Gateway gives its `gateway.request` span for an operation (name, type). */
export function requestSpanAttributes(operationContext: OperationContext): SpanAttributes {
  const name = operationContext.operation.name?.value;
  return {
    ...(name ? { operationName: name, 'graphql.operation.name': name } : {}),
    ...apolloTelemetry.operationContextSpanAttributes(operationContext),
  };
}
