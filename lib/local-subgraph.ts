import type { IncomingHttpHeaders } from 'node:http';
import {
  execute,
  GraphQLError,
  Kind,
  parse,
  validate,
  type DocumentNode,
  type FormattedExecutionResult,
  type GraphQLFormattedError,
  type GraphQLSchema,
} from 'graphql';
import type { SubgraphFaults } from './availability.js';
import { ErrorCode } from './errors.js';
import { operationObserver } from './graphql-telemetry.js';
import type { Logger } from './logger.js';
import { GRAPHQL_MAX_TOKENS } from './query-limits.js';

/** What a subgraph's context is made from: the caller's headers (credentials, request id) and the request's id. */
export interface SubgraphRequest {
  headers: IncomingHttpHeaders;
  id?: unknown;
  /**
   * The client that the limits count per (its address; IPv6 per /64): over HTTP the address the
   * gateway forwarded, when the caller is the gateway (`subgraphClientOf`); in process, the gateway's caller.
   */
  client?: string;
}

/** One operation as the gateway sends it to a subgraph. */
export interface SubgraphOperation {
  query?: string;
  variables?: Record<string, unknown>;
  operationName?: string;
}

/** A subgraph the gateway can run in its own process, with no HTTP and no JSON between them. */
export interface LocalSubgraph {
  execute(operation: SubgraphOperation, request: SubgraphRequest): Promise<FormattedExecutionResult>;
}

/**
 * Fetch texts are fixed per query plan, so a few hundred distinct ones cover a deployment; past this
 * many the oldest is dropped (a client sending ever new queries cannot grow it without bound).
 */
const DOCUMENT_CACHE_SIZE = 1000;

/**
 * Runs operations on a subgraph's guarded schema in process, as its HTTP server would: the same
 * context (made by `contextOf` from the caller's headers), the same shield, the same error
 * formatting and masking (internal errors logged with the request id), but no socket, no Express
 * stack and no JSON either way. The parsed and validated document is kept by its text.
 */
export function localSubgraph<Context extends object>(
  schema: GraphQLSchema,
  contextOf: (request: SubgraphRequest) => Promise<Context>,
  { faults, log, part }: { faults: SubgraphFaults; log: Logger; part: string },
): LocalSubgraph {
  // Counted, timed and traced as its HTTP server's Apollo plugin would (`operationTelemetry`).
  const observe = operationObserver<object>({ part, span: true });
  const documents = new Map<string, DocumentNode | GraphQLFormattedError[]>();

  const documentOf = (query: string): DocumentNode | GraphQLFormattedError[] => {
    const cached = documents.get(query);
    if (cached) return cached;
    let answer: DocumentNode | GraphQLFormattedError[];
    try {
      const document = parse(query, { maxTokens: GRAPHQL_MAX_TOKENS });
      const problems = validate(schema, document);
      answer = problems.length ? problems.map((problem) => withCode(problem, 'GRAPHQL_VALIDATION_FAILED')) : document;
    } catch (error) {
      answer = [withCode(error as GraphQLError, 'GRAPHQL_PARSE_FAILED')];
    }
    if (documents.size >= DOCUMENT_CACHE_SIZE) documents.delete(documents.keys().next().value!);
    documents.set(query, answer);
    return answer;
  };

  return {
    async execute(operation, request) {
      const started = performance.now();
      const answer = await run(operation, request);
      // The line its HTTP server would write, at debug: in process there is no hop to see, the
      // gateway's line already names the request and its outcome (with the subgraph's part in metrics
      // and spans), and a third line per request cost a measurable share of its CPU.
      log.debug({ req: { id: request.id }, operationName: operation.operationName, errors: answer.errors?.length, responseTime: Math.round(performance.now() - started) }, 'operation completed');
      return answer;
    },
  };

  async function run(operation: SubgraphOperation, request: SubgraphRequest): Promise<FormattedExecutionResult> {
    const document = documentOf(operation.query ?? '');
    if (Array.isArray(document)) return observed({}, operation, { errors: document });
    let contextValue: Context;
    try {
      contextValue = await contextOf(request);
    } catch (error) {
      // A caller the context refuses (a bad token): its error, formatted as every other.
      const graphQLError = error instanceof GraphQLError ? error : new GraphQLError('Context creation failed', { originalError: error as Error });
      return observed({}, operation, {
        errors: [faults.formatError(graphQLError.toJSON(), graphQLError, request.id)],
      });
    }
    const observation = observe(contextValue);
    const definition = document.definitions.find((node) => node.kind === Kind.OPERATION_DEFINITION);
    observation.resolved(definition?.operation ?? 'query', operation.operationName ?? definition?.name?.value);
    const answer = await executed(document, operation, contextValue, request);
    observation.finish(answer.errors, operation.operationName ?? definition?.name?.value);
    return answer;
  }

  /** An operation refused before it ran, still counted. */
  function observed(contextValue: object, operation: SubgraphOperation, answer: FormattedExecutionResult): FormattedExecutionResult {
    const observation = observe(contextValue);
    observation.finish(answer.errors, operation.operationName);
    return answer;
  }

  async function executed(document: DocumentNode, operation: SubgraphOperation, contextValue: Context, request: SubgraphRequest): Promise<FormattedExecutionResult> {
    const startedAt = Date.now();
    const result = await execute({ schema, document, variableValues: operation.variables, operationName: operation.operationName, contextValue });
    if (!result.errors?.length) return { data: result.data };
    // No `data` at all: the variables did not fit the operation (Apollo Server answers BAD_USER_INPUT).
    const errors = await faults.settle(
      startedAt,
      result.errors.map((error) => faults.formatError('data' in result ? error.toJSON() : withCode(error, ErrorCode.BAD_USER_INPUT), error, request.id)),
    );
    return 'data' in result ? { data: result.data, errors } : { errors };
  }
}

function withCode(error: GraphQLError, code: string): GraphQLFormattedError {
  const formatted = error.toJSON();
  return { ...formatted, extensions: { ...formatted.extensions, code } };
}
