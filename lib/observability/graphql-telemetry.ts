import type { ApolloServerPlugin, BaseContext } from '@apollo/server';
import { ApolloServerErrorCode } from '@apollo/server/errors';
import type { GraphQLFormattedError } from 'graphql';
import { ErrorCode } from '../errors.js';
import type { Logger } from './logger.js';
import { BoundedLabel, graphqlDuration, graphqlOperations } from './metrics.js';
import { startOperationSpan, traceFields } from './tracing.js';

/** Outcomes a GraphQL operation is counted under: `ok` or the first error's code, from this closed set. */
const KNOWN_CODES = new Set<string>([...Object.values(ErrorCode), ...Object.values(ApolloServerErrorCode)]);

export interface OperationTelemetryOptions<Context> {
  /** `gateway`, `social-subgraph`...: the `part` label. */
  part: string;
  /** Writes one line per operation (name, duration, outcome, request id, trace id); the gateway's, which has no HTTP line of its own in process. */
  log?: Logger;
  /** The request id the operation runs for, from its context. */
  requestIdOf?: (context: Context) => string | undefined;
  /** Makes the operation's span (subgraphs; the gateway has Apollo Gateway's own `gateway.request`). */
  span?: boolean;
}

/** One operation being observed: its span (if asked for) and its clock, until `finish`. */
export interface ObservedOperation {
  /** The operation is known (after parsing): names the span. */
  resolved(type: string, operationName: string | null | undefined): void;
  /** The answer is ready: counts, times, logs and ends the span. */
  finish(errors: readonly GraphQLFormattedError[] | undefined, operationName: string | null | undefined): void;
}

/**
 * Counts and times each operation (`graphql_operations_total`, `graphql_operation_duration_seconds`)
 * per operation name and outcome, and, as asked, logs it and opens its span. Shared by the Apollo
 * plugin below and the in-process subgraphs (`lib/subgraph/local-subgraph.ts`), which run without Apollo
 * Server, so that a subgraph is observed alike whichever way the gateway reaches it. Operation names
 * come from callers, so they are capped (`BoundedLabel`).
 */
export function operationObserver<Context extends object>(options: OperationTelemetryOptions<Context>) {
  const names = new BoundedLabel();
  return (contextValue: Context): ObservedOperation => {
    const started = performance.now();
    const trace = traceFields();
    const span = options.span
      ? startOperationSpan(contextValue, 'graphql.operation', { 'platform.part': options.part })
      : undefined;
    return {
      resolved(type, operationName) {
        span?.updateName(`${type} ${operationName ?? 'anonymous'}`);
        span?.setAttributes({ 'graphql.operation.type': type, 'graphql.operation.name': operationName ?? '' });
      },
      finish(errors, operationName) {
        const seconds = (performance.now() - started) / 1000;
        const code = errors?.length ? errors[0]?.extensions?.code : undefined;
        const outcome = !errors?.length ? 'ok' : typeof code === 'string' && KNOWN_CODES.has(code) ? code : 'OTHER';
        const operation = names.of(operationName ?? undefined);
        graphqlOperations.inc({ part: options.part, operation, outcome });
        graphqlDuration.observe({ part: options.part, operation }, seconds);
        if (span) {
          span.setAttribute('graphql.outcome', outcome);
          span.end();
        }
        options.log?.[
          outcome === 'ok' ? 'info' : outcome === String(ErrorCode.INTERNAL_SERVER_ERROR) ? 'error' : 'warn'
        ](
          {
            operation,
            outcome,
            durationMs: Math.round(seconds * 10_000) / 10,
            requestId: options.requestIdOf?.(contextValue),
            ...trace,
          },
          'graphql operation',
        );
      },
    };
  };
}

/** `operationObserver` as an Apollo Server plugin (the gateway, and subgraphs served over HTTP). */
export function operationTelemetry<Context extends BaseContext>(
  options: OperationTelemetryOptions<Context> | ((contextValue: Context) => ObservedOperation),
): ApolloServerPlugin<Context> {
  // An observer of its own, or one shared with another way the same part runs operations (the gateway's short path).
  const observe = typeof options === 'function' ? options : operationObserver(options);
  return {
    async requestDidStart({ contextValue, request }) {
      const observed = observe(contextValue);
      return {
        async didResolveOperation({ operationName, operation }) {
          observed.resolved(operation?.operation ?? 'query', operationName);
        },
        async willSendResponse({ response, operationName }) {
          const errors = response.body.kind === 'single' ? response.body.singleResult.errors : undefined;
          observed.finish(errors, operationName ?? request.operationName);
        },
      };
    },
  };
}
