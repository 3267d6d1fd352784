import {
  createSourceEventStream,
  execute,
  GraphQLError,
  Kind,
  OperationTypeNode,
  parse,
  specifiedRules,
  validate,
  type DocumentNode,
  type ExecutionResult,
  type FormattedExecutionResult,
  type GraphQLFormattedError,
  type GraphQLSchema,
  type ValidationRule,
} from 'graphql';
import type { SubgraphFaults } from '../http/availability.js';
import { AppError, ErrorCode } from '../errors.js';
import type { Principal } from '../identity.js';
import { whenAborted, type Stoppable } from '../stoppable.js';
import { CheckedDocuments } from './checked-documents.js';
import { GRAPHQL_MAX_TOKENS } from './query-limits.js';
import { withCode, type SubgraphOperation, type SubgraphRequest } from './subgraph-operation.js';

/**
 * How often a stream asks again whether its credential still holds (a revoked API key, an ended
 * survey session): DESIGN.md wants an expired or revoked credential to end the stream within 60 s.
 * A bearer token's own expiry ends it on the dot.
 */
export const CREDENTIAL_RECHECK_MS = 30_000;

/** What a subscription needs to know of a context: who the caller is (lib/subgraph/shield.ts AuthContext). */
interface CallerContext {
  principal: Principal | null;
}

/**
 * Runs one subscription operation: its results, formatted as a query's are, until it ends, is
 * returned, or `signal` aborts (the subscriber left: either ends the wait for the next event at once).
 */
export type Subscribe = (
  operation: SubgraphOperation,
  request: SubgraphRequest,
  signal?: AbortSignal,
) => Stoppable<FormattedExecutionResult>;

type LiveStream = Stoppable<FormattedExecutionResult>;

/** The subscriptions of one way a subgraph is served, and the end of all of them at shutdown. */
export interface Subscriptions {
  subscribe: Subscribe;
  /** Ends every open stream (its client reconnects elsewhere with its last cursor). */
  close(): Promise<void>;
}

/**
 * Subscriptions on a subgraph's guarded schema, the same in process (`LocalSubgraph.subscribe`) and
 * over SSE on its port. The shield decides at subscribe (its rules wrap the root field's `subscribe`).
 * Each event is then executed with a context made anew from the request: the caller is
 * authenticated again (a key revoked meanwhile ends the stream with UNAUTHENTICATED), and the event's
 * fields are read fresh, not from loaders filled by an earlier event. A stream that waits without
 * events checks its caller every `CREDENTIAL_RECHECK_MS` all the same.
 */
export function subscriptionsOf(
  schema: GraphQLSchema,
  contextOf: (request: SubgraphRequest) => Promise<object>,
  { faults, validationRules = [] }: { faults: SubgraphFaults; validationRules?: readonly ValidationRule[] },
): Subscriptions {
  const rules = [...specifiedRules, ...validationRules];
  const documents = new CheckedDocuments((query) => documentOf(schema, query, rules));
  const open = new Set<LiveStream>();
  const formatted = (error: GraphQLError, request: SubgraphRequest) =>
    faults.formatError(error.toJSON(), error, request.id);

  const subscribe: Subscribe = (operation, request, signal) => {
    let stop!: () => void;
    const stopped = new Promise<'stopped'>((resolve) => (stop = () => resolve('stopped')));
    let source: AsyncIterator<unknown> | undefined;

    async function* results(): AsyncGenerator<FormattedExecutionResult> {
      const started = await start();
      if (!('source' in started)) {
        yield started;
        return;
      }
      source = started.source;
      try {
        yield* follow(started.source, started.subscriber, started.document);
      } finally {
        // However it ends: a return() that came while it was still subscribing found no source to end.
        await source.return?.();
      }
    }

    /**
     * Subscribes: the events' source and who subscribed, or the answer that refuses. Only these are
     * kept while the stream lasts; the context of the subscribe (its entity manager, its loaders) is
     * let go here, and each event gets a context of its own.
     */
    async function start(): Promise<
      | { source: AsyncIterator<unknown>; subscriber: Principal | null; document: DocumentNode }
      | FormattedExecutionResult
    > {
      const document = documents.get(operation.query ?? '');
      if (Array.isArray(document)) return { errors: document };
      const caller = await callerContext(request);
      if (!('principal' in caller)) return caller;
      const { variables: variableValues } = operation;
      const stream = await createSourceEventStream({ schema, document, contextValue: caller, variableValues });
      if (!isAsyncIterable(stream)) return withFormattedErrors(stream, request);
      return { source: stream[Symbol.asyncIterator](), subscriber: caller.principal, document };
    }

    async function* follow(
      source: AsyncIterator<unknown>,
      subscriber: Principal | null,
      document: DocumentNode,
    ): AsyncGenerator<FormattedExecutionResult> {
      const { variables: variableValues } = operation;
      const who = subscriber?.userId;
      let pending: Promise<IteratorResult<unknown>> | undefined;
      for (;;) {
        pending ??= source.next();
        const expiresAt = subscriber?.expiresAt?.getTime() ?? Infinity;
        const wait = Math.max(0, Math.min(CREDENTIAL_RECHECK_MS, expiresAt - Date.now()));
        let timer: NodeJS.Timeout | undefined;
        const recheck = new Promise<'recheck'>((resolve) => (timer = setTimeout(() => resolve('recheck'), wait)));
        const next = await Promise.race([pending, stopped, recheck]).finally(() => clearTimeout(timer));
        if (next === 'stopped') return;
        if (next !== 'recheck') pending = undefined;
        if (next !== 'recheck' && next.done) return;
        const current = await callerContext(request);
        const principal = 'principal' in current ? current.principal : null;
        // A caller who subscribed anonymously (a service open to anyone) has no credential to lose.
        const credentialLost = who !== undefined && (!principal || principal.userId !== who || isExpired(principal));
        if (credentialLost) {
          yield { errors: [formatted(credentialEnded(current), request)] };
          return;
        }
        if (next === 'recheck') continue;
        const result = await execute({
          schema,
          document,
          rootValue: next.value,
          contextValue: current,
          variableValues,
        });
        yield withFormattedErrors(result, request);
      }
    }

    /** The request's context, or the formatted answer of a caller the context refused. */
    async function callerContext(request: SubgraphRequest): Promise<CallerContext | FormattedExecutionResult> {
      try {
        return await contextOf(request);
      } catch (error) {
        const graphQLError =
          error instanceof GraphQLError
            ? error
            : new GraphQLError('Context creation failed', { originalError: error as Error });
        return { errors: [formatted(graphQLError, request)] };
      }
    }

    function withFormattedErrors(result: ExecutionResult, request: SubgraphRequest): FormattedExecutionResult {
      if (!result.errors?.length) return { data: result.data };
      const errors = result.errors.map((error) => formatted(error, request));
      return 'data' in result ? { data: result.data, errors } : { errors };
    }

    let forgetSignal = (): void => undefined;
    const ended = () => {
      open.delete(stream);
      forgetSignal();
    };
    const generator = results();
    const stream: LiveStream = {
      async next() {
        const result = await generator.next();
        if (result.done) ended();
        return result;
      },
      // Returned while it waits for an event: the wait ends at once, not at the next event.
      async return() {
        ended();
        stop();
        await source?.return?.();
        return generator.return(undefined);
      },
      [Symbol.asyncIterator]() {
        return this;
      },
    };
    open.add(stream);
    // The subscriber left: as a return, however many layers of generators sit between it and here.
    forgetSignal = whenAborted(signal, () => void stream.return());
    return stream;
  };

  return {
    subscribe,
    async close() {
      await Promise.all([...open].map((stream) => stream.return()));
    },
  };
}

/** The document of a subscription, parsed and validated, or the errors that refuse it. */
function documentOf(
  schema: GraphQLSchema,
  query: string,
  rules: readonly ValidationRule[],
): DocumentNode | GraphQLFormattedError[] {
  let document: DocumentNode;
  try {
    document = parse(query, { maxTokens: GRAPHQL_MAX_TOKENS });
  } catch (error) {
    return [withCode(error as GraphQLError, 'GRAPHQL_PARSE_FAILED')];
  }
  const problems = validate(schema, document, rules);
  if (problems.length) return problems.map((problem) => withCode(problem, 'GRAPHQL_VALIDATION_FAILED'));
  const operations = document.definitions.filter((node) => node.kind === Kind.OPERATION_DEFINITION);
  if (operations.length !== 1 || operations[0].operation !== OperationTypeNode.SUBSCRIPTION) {
    return [
      withCode(new GraphQLError('Send exactly one subscription operation to subscribe'), ErrorCode.BAD_USER_INPUT),
    ];
  }
  return document;
}

function isAsyncIterable(value: unknown): value is AsyncIterable<unknown> {
  return typeof value === 'object' && value !== null && Symbol.asyncIterator in value;
}

function isExpired(principal: Principal): boolean {
  return principal.expiresAt !== undefined && principal.expiresAt.getTime() <= Date.now();
}

/** Why a stream ends for its caller: the context's own refusal when it gave one. */
function credentialEnded(current: CallerContext | FormattedExecutionResult): GraphQLError {
  const refusal = 'principal' in current ? (current as { refusal?: AppError }).refusal : undefined;
  return refusal?.code === ErrorCode.UNAUTHENTICATED
    ? refusal
    : new AppError(ErrorCode.UNAUTHENTICATED, 'The credential of this subscription expired or was revoked');
}
