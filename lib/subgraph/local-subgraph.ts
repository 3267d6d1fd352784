import {
  execute,
  GraphQLError,
  isAbstractType,
  isObjectType,
  Kind,
  parse,
  validate,
  type DocumentNode,
  type ExecutionResult,
  type FormattedExecutionResult,
  type GraphQLFormattedError,
  type GraphQLSchema,
} from 'graphql';
import { compileQuery, isCompiledQuery } from 'graphql-jit';
import type { SubgraphFaults } from '../http/availability.js';
import { ErrorCode } from '../errors.js';
import { operationObserver } from '../observability/graphql-telemetry.js';
import type { Logger } from '../observability/logger.js';
import { GRAPHQL_MAX_TOKENS } from './query-limits.js';
import { subscriptionsOf } from './subscriptions.js';
import { withCode, type SubgraphOperation, type SubgraphRequest } from './subgraph-operation.js';
import type { EntityManager } from '../data/database.js';
import {
  asGraphQLError,
  idempotencyScopeOf,
  runIdempotently,
  type IdempotentContexts,
} from './idempotent-operations.js';

export type { SubgraphOperation, SubgraphRequest } from './subgraph-operation.js';

/**
 * A context that states extensions of its answer: facts for the gateway that are no part of the data
 * (the session cookie a sign-in asks for). Both ways a subgraph runs, in process and over HTTP, add them.
 */
export interface AnswerExtensionsContext {
  answerExtensions: Record<string, unknown>;
}

/** The extensions a request's context stated for its answer, or undefined when it stated none. */
export function answerExtensionsOf(contextValue: object): Record<string, unknown> | undefined {
  const stated = (contextValue as Partial<AnswerExtensionsContext>).answerExtensions;
  return stated && Object.keys(stated).length ? stated : undefined;
}

/** A subgraph the gateway can run in its own process, with no HTTP and no JSON between them. */
export interface LocalSubgraph {
  execute(operation: SubgraphOperation, request: SubgraphRequest): Promise<FormattedExecutionResult>;
  /**
   * Runs a `subscription` operation (one root field of the subgraph's Subscription type, the
   * selection this subgraph resolves itself) and answers its results, formatted and masked as
   * `execute`'s are. The contract the gateway relies on:
   * - The first result may be the refusal at subscribe (a shield rule, `after` not a cursor, an
   *   unknown import): `{ errors }` with the error's `extensions.code`, and the iterator ends.
   * - Then one `{ data }` per event the caller may see, oldest first. Each root field's payload
   *   holds the event's `cursor` (when the field selects it): hand it back as `after` to resume,
   *   SSE's `id:` included.
   * - A credential that expired or was revoked ends the stream with one `{ errors }` result coded
   *   UNAUTHENTICATED (checked at every event and at least every 30 s).
   * - Calling `return()`, or aborting `signal`, ends it at once (the client left) and frees what it
   *   held, even while it waits for an event (a `return()` to a generator around it would wait for
   *   the next one: such a generator hands its signal down instead); the results end
   *   by themselves when the stream is over (an import that finished) or the subgraph shuts down.
   * Each event is executed with a context made from `request` anew (the same headers, so the same
   * credentials), so entities the event names are read as they are at delivery.
   */
  subscribe(
    operation: SubgraphOperation,
    request: SubgraphRequest,
    signal?: AbortSignal,
  ): AsyncIterableIterator<FormattedExecutionResult>;
}

/**
 * Fetch texts are fixed per query plan, so a few hundred distinct ones cover a deployment; past this
 * many the oldest is dropped (a client sending ever new queries cannot grow it without bound).
 */
const OPERATION_CACHE_SIZE = 1000;

/** A fetch text parsed, validated and compiled: what running it needs besides the request. */
interface PreparedOperation {
  /** `query`, `mutation`: names the operation's span. */
  type: string;
  name: string | undefined;
  /** What the shield's rules are asked about before an Idempotency-Key's replay. */
  document: DocumentNode;
  run(contextValue: object, variables: Record<string, unknown> | undefined): Promise<ExecutionResult> | ExecutionResult;
}

/**
 * Runs operations on a subgraph's guarded schema in process, as its HTTP server would: the same
 * context (made by `contextOf` from the caller's headers), the same shield, the same error
 * formatting and masking (internal errors logged with the request id), but no socket, no Express
 * stack and no JSON either way. Each text is parsed, validated and compiled once, and kept.
 */
export function localSubgraph<Context extends object>(
  schema: GraphQLSchema,
  contextOf: (request: SubgraphRequest, em?: EntityManager) => Promise<Context>,
  {
    faults,
    log,
    part,
    idempotency,
  }: {
    faults: SubgraphFaults;
    log: Logger;
    part: string;
    /**
     * What a mutation under an Idempotency-Key runs on (`runIdempotently`): new entity managers on the
     * subgraph's database (its context is made on one of its own) and the shield's rules asked before a replay.
     */
    idempotency?: IdempotentContexts;
  },
): LocalSubgraph {
  // Counted, timed and traced as its HTTP server's Apollo plugin would (`operationTelemetry`).
  const observe = operationObserver<object>({ part, span: true });
  const execution = executionOf(schema);
  const operations = new Map<string, PreparedOperation | GraphQLFormattedError[]>();

  const operationOf = (query: string): PreparedOperation | GraphQLFormattedError[] => {
    const cached = operations.get(query);
    if (cached) return cached;
    const answer = prepare(schema, execution, query);
    if (operations.size >= OPERATION_CACHE_SIZE) operations.delete(operations.keys().next().value!);
    operations.set(query, answer);
    return answer;
  };

  const { subscribe } = subscriptionsOf(schema, (request) => contextOf(request), { faults });

  return {
    subscribe,
    async execute(operation, request) {
      const started = performance.now();
      const answer = await run(operation, request);
      // The line its HTTP server would write, at debug: in process there is no hop to see, the
      // gateway's line already names the request and its outcome (with the subgraph's part in metrics
      // and spans), and a third line per request cost a measurable share of its CPU.
      log.debug(
        {
          req: { id: request.id },
          operationName: operation.operationName,
          errors: answer.errors?.length,
          responseTime: Math.round(performance.now() - started),
        },
        'operation completed',
      );
      return answer;
    },
  };

  async function run(operation: SubgraphOperation, request: SubgraphRequest): Promise<FormattedExecutionResult> {
    const prepared = operationOf(operation.query ?? '');
    if (Array.isArray(prepared)) return observed({}, operation, { errors: prepared });
    const em = prepared.type === 'mutation' ? idempotency?.fork() : undefined;
    let contextValue: Context;
    try {
      contextValue = await contextOf(request, em);
    } catch (error) {
      // A caller the context refuses (a bad token): its error, formatted as every other.
      const graphQLError =
        error instanceof GraphQLError
          ? error
          : new GraphQLError('Context creation failed', { originalError: error as Error });
      return observed({}, operation, {
        errors: [faults.formatError(graphQLError.toJSON(), graphQLError, request.id)],
      });
    }
    const observation = observe(contextValue);
    observation.resolved(prepared.type, prepared.name);
    let answer: FormattedExecutionResult;
    const startedAt = Date.now();
    try {
      const scope = em && idempotency ? idempotencyScopeOf(request, operation, contextValue) : undefined;
      const execute = () => executed(prepared, operation, contextValue, request);
      const guard = idempotency && {
        rules: idempotency.rules,
        request: { document: prepared.document, variables: operation.variables, contextValue },
      };
      answer = scope && em && idempotency && guard ? await runIdempotently(em, scope, guard, execute) : await execute();
    } catch (error) {
      // An Idempotency-Key refused (malformed, reused, still running): its error, formatted as every other.
      // Its claim or its commit may also fail on the database itself (no connection to be had, one lost):
      // an outage, answered 503 like any other, never thrown on to become the gateway's 500.
      const graphQLError = asGraphQLError(error);
      answer = {
        errors: await faults.settle(startedAt, [faults.formatError(graphQLError.toJSON(), graphQLError, request.id)]),
      };
    }
    observation.finish(answer.errors, prepared.name);
    return answer;
  }

  /** An operation refused before it ran, still counted. */
  function observed(
    contextValue: object,
    operation: SubgraphOperation,
    answer: FormattedExecutionResult,
  ): FormattedExecutionResult {
    const observation = observe(contextValue);
    observation.finish(answer.errors, operation.operationName);
    return answer;
  }

  async function executed(
    prepared: PreparedOperation,
    operation: SubgraphOperation,
    contextValue: Context,
    request: SubgraphRequest,
  ): Promise<FormattedExecutionResult> {
    const startedAt = Date.now();
    const result = await prepared.run(contextValue, operation.variables);
    const extensions = answerExtensionsOf(contextValue);
    if (!result.errors?.length) return { data: result.data, ...(extensions && { extensions }) };
    // No `data` at all: the variables did not fit the operation (Apollo Server answers BAD_USER_INPUT).
    const errors = await faults.settle(
      startedAt,
      result.errors.map((error) =>
        faults.formatError(
          'data' in result ? error.toJSON() : withCode(error, ErrorCode.BAD_USER_INPUT),
          error,
          request.id,
        ),
      ),
    );
    return 'data' in result ? { data: result.data, errors, ...(extensions && { extensions }) } : { errors };
  }
}

/** How a subgraph's operations run (`executionOf`). */
export type Execution = 'compiled' | 'interpreted';

/**
 * How a subgraph's operations run: `compiled` by graphql-jit, or `interpreted` by graphql-js's
 * `execute`. The gateway sends the same few fetch texts again and again; a compiled operation runs
 * the same resolvers (the shield's among them) with the same results and errors, without walking the
 * document on every request: a page of twenty contacts costs about a fifth less CPU in the process.
 * graphql-jit cannot wait for a type resolver, and type-graphql's unions and interfaces resolve
 * their types asynchronously, so a schema that has one is interpreted (none of ours does today).
 */
export function executionOf(schema: GraphQLSchema): Execution {
  const waits = (resolver: unknown) => typeof resolver === 'function' && resolver.constructor.name === 'AsyncFunction';
  const types = Object.values(schema.getTypeMap());
  const asyncTypeResolution = types.some(
    (type) => (isAbstractType(type) && waits(type.resolveType)) || (isObjectType(type) && waits(type.isTypeOf)),
  );
  return asyncTypeResolution ? 'interpreted' : 'compiled';
}

/**
 * Parses and validates a fetch text once, and compiles it when the schema allows. The gateway sends
 * one operation per fetch text, so the text alone names it: a text with several is refused (as
 * graphql-js refuses one without an operation name), whatever `operationName` comes with it.
 */
function prepare(
  schema: GraphQLSchema,
  execution: Execution,
  query: string,
): PreparedOperation | GraphQLFormattedError[] {
  let document;
  try {
    document = parse(query, { maxTokens: GRAPHQL_MAX_TOKENS });
  } catch (error) {
    return [withCode(error as GraphQLError, 'GRAPHQL_PARSE_FAILED')];
  }
  const problems = validate(schema, document);
  if (problems.length) return problems.map((problem) => withCode(problem, 'GRAPHQL_VALIDATION_FAILED'));
  const definition = document.definitions.find((node) => node.kind === Kind.OPERATION_DEFINITION);
  const operation = { type: definition?.operation ?? 'query', name: definition?.name?.value, document };
  if (execution === 'interpreted') {
    return {
      ...operation,
      run: (contextValue, variables) => execute({ schema, document, variableValues: variables, contextValue }),
    };
  }
  const compiled = compileQuery(schema, document);
  if (!isCompiledQuery(compiled))
    return (compiled.errors ?? []).map((error) => withCode(error, 'GRAPHQL_VALIDATION_FAILED'));
  return { ...operation, run: (contextValue, variables) => compiled.query(undefined, contextValue, variables ?? {}) };
}
