import type { ApolloServerPlugin, BaseContext } from '@apollo/server';
import { ApolloServerErrorCode } from '@apollo/server/errors';
import { ErrorCode } from './errors.js';
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

/**
 * An Apollo Server plugin that counts and times each operation (`graphql_operations_total`,
 * `graphql_operation_duration_seconds`) per operation name and outcome, and, as asked, logs it
 * and opens its span. Operation names come from callers, so they are capped (`BoundedLabel`).
 */
export function operationTelemetry<Context extends BaseContext>(options: OperationTelemetryOptions<Context>): ApolloServerPlugin<Context> {
  const names = new BoundedLabel();
  return {
    async requestDidStart({ contextValue, request }) {
      const started = performance.now();
      const trace = traceFields();
      const span = options.span ? startOperationSpan(contextValue, 'graphql.operation', { 'platform.part': options.part }) : undefined;
      return {
        async didResolveOperation({ operationName, operation }) {
          const type = operation?.operation ?? 'query';
          span?.updateName(`${type} ${operationName ?? 'anonymous'}`);
          span?.setAttributes({ 'graphql.operation.type': type, 'graphql.operation.name': operationName ?? '' });
        },
        async willSendResponse({ response, operationName }) {
          const seconds = (performance.now() - started) / 1000;
          const errors = response.body.kind === 'single' ? response.body.singleResult.errors : undefined;
          const code = errors?.length ? errors[0]?.extensions?.code : undefined;
          const outcome = !errors?.length ? 'ok' : typeof code === 'string' && KNOWN_CODES.has(code) ? code : 'OTHER';
          const operation = names.of(operationName ?? request.operationName);
          graphqlOperations.inc({ part: options.part, operation, outcome });
          graphqlDuration.observe({ part: options.part, operation }, seconds);
          if (span) {
            span.setAttribute('graphql.outcome', outcome);
            span.end();
          }
          options.log?.[outcome === 'ok' ? 'info' : outcome === String(ErrorCode.INTERNAL_SERVER_ERROR) ? 'error' : 'warn'](
            { operation, outcome, durationMs: Math.round(seconds * 10_000) / 10, requestId: options.requestIdOf?.(contextValue), ...trace },
            'graphql operation',
          );
        },
      };
    },
  };
}
