import type { Request } from 'express';
import type { DocumentTypeDecoration } from '@graphql-typed-document-node/core';
import type { GraphQLFormattedError } from 'graphql';
import {
  AppError,
  ErrorCode,
  httpStatusOf,
  isErrorCode,
  problemFor,
  type FieldProblem,
  type ProblemDetails,
} from '../errors.js';
import { BEARER_ERROR_EXTENSION } from '../identity.js';
import { IDEMPOTENCY_KEY_HEADER, IDEMPOTENT_REPLAY_EXTENSION } from '../data/idempotency.js';
import { RATE_LIMIT_EXTENSION, rateLimitHeaders, rateLimitStatesSchema } from '../http/rate-limit.js';
import { requestIdOf } from '../observability/logger.js';
import { forwardHeadersOf, type GatewayContext, type GraphQLClient, type GraphQLResult } from './graphql-client.js';
import { bearerChallenge } from './rest-headers.js';

/** Thrown by `runOperation` when the operation answered with an error: carries the problem to send. */
export class ProblemError extends Error {
  constructor(
    readonly problem: ProblemDetails,
    readonly headers: Record<string, string> = {},
    /** `cause`: what went wrong in the platform's own terms (a socket error...), for the log line of a 5xx, never the body. */
    options?: ErrorOptions,
  ) {
    super(problem.detail, options);
    this.name = 'ProblemError';
  }
}

/**
 * What a route does with a root field that answers `null` without an error. Every root field of the
 * graph is nullable, so that one service refusing or failing costs a frontend only its own fields;
 * a REST route still answers as it did when only lookups were nullable.
 */
export interface AbsentAnswer {
  /** The operation looks one thing up by id: `null` is a 404 "<lookup> not found". Unset: a 500, as GraphQL's non-null check answered. */
  lookup?: string;
}

/** How a route runs one operation, besides its variables. */
export interface RunOptions extends AbsentAnswer {
  /**
   * Sends the operation without the request's `Idempotency-Key`: a step that is not what the key
   * stands for, such as an upload's reservation or its cancel (lib/storage/multipart-upload.ts),
   * which every attempt runs anew; only the upload's commit is answered again for the key.
   */
  withoutIdempotencyKey?: boolean;
}

/** An answer with every root field present: what a route reads after `runOperation`. */
export type Answered<Data> = { [Field in keyof Data]: NonNullable<Data[Field]> };

/**
 * Runs one operation as the caller (their credentials and request id go along) and returns its
 * data, or throws the first GraphQL error as a problem with the status its code maps to; a root
 * field `null` without an error is settled by `options` (`AbsentAnswer`).
 */
export async function runOperation<Data>(
  client: Pick<GraphQLClient, 'execute'>,
  operation: string,
  variables: Record<string, unknown>,
  req: Request,
  options: RunOptions = {},
): Promise<Answered<Data>> {
  const forwardHeaders = forwardHeadersOf(req.headers);
  if (options.withoutIdempotencyKey) delete forwardHeaders[IDEMPOTENCY_KEY_HEADER];
  const result = await client.execute<Data>(operation, variables, { ...callerOf(req), forwardHeaders });
  // The limits the operation counted, on the answer whether it worked or not.
  const rateLimits = rateLimitStatesSchema.safeParse(result.extensions?.[RATE_LIMIT_EXTENSION]);
  if (rateLimits.success) req.res?.set(rateLimitHeaders(rateLimits.data));
  if (result.extensions?.[IDEMPOTENT_REPLAY_EXTENSION] === true) req.res?.set(IDEMPOTENT_REPLAYED_HEADER, 'true');
  const error = result.errors?.[0];
  if (error) throw problemOfGraphQLError(error);
  if (!result.data) throw new Error('the gateway answered with neither data nor errors');
  return answered(result.data, options);
}

/** The caller of a request, as the gateway takes it: their credentials, the request id, their address. */
function callerOf(req: Request): GatewayContext {
  return { forwardHeaders: forwardHeadersOf(req.headers), requestId: requestIdOf(req), clientAddress: req.ip };
}

/** A GraphQL error as the problem to send, with the status its code maps to. */
function problemOfGraphQLError(error: GraphQLFormattedError): ProblemError {
  const code = error.extensions?.code;
  const status = httpStatusOf(code);
  const problemCode = isErrorCode(code)
    ? code
    : status === 400
      ? ErrorCode.BAD_USER_INPUT
      : ErrorCode.INTERNAL_SERVER_ERROR;
  const fields = error.extensions?.errors as FieldProblem[] | undefined;
  const retryAfter = error.extensions?.retryAfter as number | undefined;
  const {
    code: _code,
    errors: _errors,
    retryAfter: _retry,
    serviceName: _service,
    [BEARER_ERROR_EXTENSION]: bearerError,
    ...details
  } = error.extensions ?? {};
  return new ProblemError(
    problemFor(problemCode, error.message, {
      ...(fields?.length ? { errors: fields } : {}),
      ...(status < 500 ? details : {}),
    }),
    {
      ...(retryAfter !== undefined ? { 'retry-after': String(retryAfter) } : {}),
      ...(status === 401 ? { 'www-authenticate': bearerChallenge(bearerError) } : {}),
    },
  );
}

/**
 * How long a new subscription may take to refuse before its stream is answered. A GraphQL
 * subscription acknowledges nothing: a refusal at subscribe (no credentials, a scope, a brand out of
 * reach, an `after` that is no cursor) comes as its first result, at once, while an accepted one says
 * nothing until its first event. A refusal later than this still ends the stream, as its last event.
 */
export const REFUSAL_WINDOW_MS = 1_000;

/**
 * Subscribes as the caller (their credentials and request id go along) and answers the stream of
 * its data once it is open, or throws the refusal at subscribe as a problem with the status its code
 * maps to. An error later (a credential that expired) is thrown by the stream, as a problem.
 */
export async function followOperation<Data>(
  client: GraphQLClient,
  operation: string,
  variables: Record<string, unknown>,
  req: Request,
): Promise<AsyncIterableIterator<Answered<Data>>> {
  const results = client.subscribe<Data>(operation, variables, callerOf(req));
  const answeredOf = (result: GraphQLResult<Data>): Answered<Data> => {
    const error = result.errors?.[0];
    if (error) throw problemOfGraphQLError(error);
    if (!result.data) throw new Error('the gateway answered an event with neither data nor errors');
    return answered(result.data, {});
  };
  let timer: NodeJS.Timeout | undefined;
  const waited = new Promise<'open'>((resolve) => (timer = setTimeout(() => resolve('open'), REFUSAL_WINDOW_MS)));
  const first = results.next();
  const settled = await Promise.race([first, waited]).finally(() => clearTimeout(timer));
  if (settled !== 'open' && !settled.done && settled.value.errors?.length) {
    await results.return?.(undefined);
    throw problemOfGraphQLError(settled.value.errors[0]);
  }
  let pending: Promise<IteratorResult<GraphQLResult<Data>>> | undefined = first;
  const stream: AsyncIterableIterator<Answered<Data>> = {
    async next() {
      const next = await (pending ?? results.next());
      pending = undefined;
      return next.done ? { done: true, value: undefined } : { done: false, value: answeredOf(next.value) };
    },
    async return() {
      pending = undefined;
      await results.return?.(undefined);
      return { done: true, value: undefined };
    },
    [Symbol.asyncIterator]() {
      return this;
    },
  };
  return stream;
}

const IDEMPOTENT_REPLAYED_HEADER = 'idempotent-replayed';

/** Whether an operation the route ran was answered from an earlier request with the same `Idempotency-Key`. */
export function isIdempotentReplay(req: Request): boolean {
  return req.res?.get(IDEMPOTENT_REPLAYED_HEADER) === 'true';
}

/** The data with every root field present, or the answer `absent` names for a missing one. */
function answered<Data>(data: Data, absent: AbsentAnswer): Answered<Data> {
  const missing = Object.entries(data as Record<string, unknown>)
    .filter(([, value]) => value === null || value === undefined)
    .map(([field]) => field);
  if (!missing.length) return data as Answered<Data>;
  if (absent.lookup !== undefined) throw AppError.notFound(absent.lookup);
  throw new Error(`the gateway answered null without an error for ${missing.join(', ')}`);
}

/**
 * The variables of an operation, each required one present; their values are the caller's input as
 * it came (a page number may still be text), for GraphQL to refuse by name.
 */
export type OperationVariables<Variables> = { [Name in keyof Variables]: unknown };

/**
 * One operation of an adapter's `operations/*.graphql`, as GraphQL Code Generator writes it into
 * `operations.generated.ts`: the operation's text with the fragments it uses, typed by its answer and
 * its variables. The text is fixed and takes every value as a variable, so the gateway's query-plan
 * cache always hits.
 */
export type OperationDocument<Result, Variables> = DocumentTypeDecoration<Result, Variables> & { toString(): string };

/** Runs one operation of an adapter as the caller; the document gives the answer its type; its errors become problems. */
export type RunOperation = <Result, Variables>(
  operation: OperationDocument<Result, Variables>,
  variables: OperationVariables<Variables>,
  req: Request,
  options?: RunOptions,
) => Promise<Answered<Result>>;

/** Subscribes to one subscription operation of an adapter as the caller; its refusal at subscribe is a problem. */
export type FollowOperation = <Result, Variables>(
  operation: OperationDocument<Result, Variables>,
  variables: OperationVariables<Variables>,
  req: Request,
) => Promise<AsyncIterableIterator<Answered<Result>>>;

/** `followOperation` over one GraphQL client, by the operation's generated document. */
export function subscriptionRunner(client: GraphQLClient): FollowOperation {
  return (document, variables, req) =>
    followOperation(client, String(document), variables as Record<string, unknown>, req);
}

/** `runOperation` over one GraphQL client, by the operation's generated document. */
export function operationRunner(client: Pick<GraphQLClient, 'execute'>): RunOperation {
  return (document, variables, req, options) =>
    runOperation(client, String(document), variables as Record<string, unknown>, req, options);
}
