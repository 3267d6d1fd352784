import type { ApolloServerPlugin, BaseContext } from '@apollo/server';
import { GraphQLError, type GraphQLFormattedError } from 'graphql';
import { AppError, ErrorCode, formatGraphQLError } from '../errors.js';
import type { Logger } from '../observability/logger.js';

/** What a client is told to wait before trying again while a service's database cannot be reached. */
export const RETRY_AFTER_SECONDS = 5;

/** Socket errors of a connection that could not be made or was lost. */
const CONNECTION_ERROR_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ETIMEDOUT',
  'EPIPE',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'ENOTFOUND',
  'EAI_AGAIN',
]);

/**
 * PostgreSQL's own codes for "not now": class 08 (connection exception), 57P01-57P03 (shutting
 * down, crash recovery, starting up), 53300 (too many connections).
 */
const UNAVAILABLE_SQLSTATE = /^(08...|57P0[123]|53300)$/;

/** What node-postgres and its pool say when a connection breaks or cannot be had. */
const CONNECTION_MESSAGES = new RegExp(
  [
    'Connection terminated',
    'connection timeout',
    'timeout exceeded when trying to connect',
    'Client has encountered a connection error',
    'Connection ended',
    'terminating connection',
    'the database system is (starting up|shutting down|in recovery mode)',
    'Client was closed and is not queryable',
    'Cannot use a pool after calling end',
  ].join('|'),
  'i',
);

/**
 * True when `error`, or anything it wraps (MikroORM's DriverException, GraphQL's originalError,
 * `cause`), says the database could not be reached: not the request's fault, nor a bug, but an
 * outage that ends by itself. Such a failure is answered 503 with `Retry-After`, never 500.
 */
export function isDatabaseUnavailable(error: unknown): boolean {
  const seen = new Set<unknown>();
  for (let current: unknown = error; current && typeof current === 'object' && !seen.has(current);) {
    seen.add(current);
    const { code, message } = current as { code?: unknown; message?: unknown };
    if (typeof code === 'string' && (CONNECTION_ERROR_CODES.has(code) || UNAVAILABLE_SQLSTATE.test(code))) return true;
    if (typeof message === 'string' && CONNECTION_MESSAGES.test(message)) return true;
    if ((current as { name?: unknown }).name === 'ConnectionException') return true;
    const holder = current as { originalError?: unknown; cause?: unknown; previous?: unknown; errors?: unknown };
    // An AggregateError (a connect that tried IPv4 and IPv6) holds its reasons in `errors`.
    current =
      holder.originalError ??
      holder.previous ??
      holder.cause ??
      (Array.isArray(holder.errors) ? (holder.errors as unknown[])[0] : undefined);
  }
  return false;
}

/** The answer while the database is out: 503, try again after `RETRY_AFTER_SECONDS`. */
export function serviceUnavailable(cause?: unknown): AppError {
  return new AppError(
    ErrorCode.SERVICE_UNAVAILABLE,
    'The service is temporarily unavailable (its database cannot be reached); try again shortly',
    {
      retryAfter: RETRY_AFTER_SECONDS,
      cause,
    },
  );
}

/**
 * For a request context that could not be made (it reads the caller's session or API key): a lost
 * database becomes a 503 (Apollo answers a failed context 500 otherwise); anything else goes on.
 */
export function unavailableContext(error: unknown): never {
  if (!isDatabaseUnavailable(error)) throw error;
  const unavailable = serviceUnavailable(error);
  throw new GraphQLError(unavailable.message, { extensions: { ...unavailable.extensions, http: { status: 503 } } });
}

/** How long after the database was last seen out an unexpected error is still taken for the outage. */
const RECENT_OUTAGE_MS = RETRY_AFTER_SECONDS * 1000;

/** When the service last saw its database out: errors, probes and the plugin below report to it. */
export class OutageWatch {
  private lastSeenDown = 0;

  markDown(): void {
    this.lastSeenDown = Date.now();
  }

  /** True when the database was seen out at `since` or later. */
  seenDownSince(since: number): boolean {
    return this.lastSeenDown >= since;
  }
}

/**
 * How a subgraph answers faults, the same over HTTP (Apollo's `formatError` and the plugin below) and
 * in process (`lib/subgraph/local-subgraph.ts`): a lost database is an outage, not a bug (SERVICE_UNAVAILABLE
 * with `retryAfter`, which the REST adapters answer 503); anything else unexpected is masked and logged.
 */
export interface SubgraphFaults {
  formatError(formatted: GraphQLFormattedError, error: unknown, requestId?: unknown): GraphQLFormattedError;
  /**
   * An unexpected error in a request during which the database was out (seen by another request, a
   * probe, or a check now) is the outage showing through, since a write cut off mid-commit can surface
   * as anything: it is answered as the outage it is.
   */
  settle(startedAt: number, errors: readonly GraphQLFormattedError[]): Promise<readonly GraphQLFormattedError[]>;
}

export function subgraphFaults(
  log: Logger,
  watch: OutageWatch,
  databaseAnswers: () => Promise<boolean>,
): SubgraphFaults {
  return {
    formatError(formatted, error, requestId) {
      if (isDatabaseUnavailable(error)) {
        watch.markDown();
        log.warn({ err: error, requestId }, 'database unavailable');
        const unavailable = serviceUnavailable();
        return { message: unavailable.message, path: formatted.path, extensions: unavailable.extensions };
      }
      return formatGraphQLError(formatted, error, (internal) =>
        log.error({ err: internal, requestId }, 'unexpected error in resolver'),
      );
    },
    async settle(startedAt, errors) {
      if (!errors.some((error) => error.extensions?.code === ErrorCode.INTERNAL_SERVER_ERROR)) return errors;
      // Down during the request, or moments before it: a pooled connection broken by the outage can
      // still fail a request that starts just after the database came back (seen as a write that
      // returns no row), which is the outage's tail, not a bug.
      if (!watch.seenDownSince(startedAt - RECENT_OUTAGE_MS) && (await databaseAnswers())) return errors;
      const unavailable = serviceUnavailable();
      return errors.map((error) =>
        error.extensions?.code === ErrorCode.INTERNAL_SERVER_ERROR
          ? { message: unavailable.message, path: error.path, extensions: unavailable.extensions }
          : error,
      );
    },
  };
}

/** `SubgraphFaults.settle` as an Apollo plugin (subgraphs served over HTTP). */
export function outageAwarePlugin<Context extends BaseContext>(faults: SubgraphFaults): ApolloServerPlugin<Context> {
  return {
    async requestDidStart() {
      const started = Date.now();
      return {
        async willSendResponse({ response }) {
          if (response.body.kind !== 'single' || !response.body.singleResult.errors?.length) return;
          response.body.singleResult.errors = await faults.settle(started, response.body.singleResult.errors);
        },
      };
    },
  };
}

/** `check` as a probe: false when it does not answer true within `ms` (a database behind a dead network hangs, it does not fail). */
export async function answersWithin(check: () => Promise<boolean>, ms = 3000): Promise<boolean> {
  let timer: NodeJS.Timeout | undefined;
  try {
    return await Promise.race([
      check(),
      new Promise<boolean>((resolve) => (timer = setTimeout(() => resolve(false), ms))),
    ]);
  } finally {
    clearTimeout(timer);
  }
}
