import { GraphQLError, type GraphQLFormattedError } from 'graphql';

/**
 * Every failure a client may see has one of these codes. The code travels as GraphQL
 * `extensions.code` and decides the HTTP status of the REST adapters; both maps below are
 * exhaustive, so a new code does not compile until it has a status and a title.
 */
export enum ErrorCode {
  UNAUTHENTICATED = 'UNAUTHENTICATED',
  FORBIDDEN = 'FORBIDDEN',
  NOT_FOUND = 'NOT_FOUND',
  BAD_USER_INPUT = 'BAD_USER_INPUT',
  CONFLICT = 'CONFLICT',
  /** A conditional write (REST `If-Match`, GraphQL `ifVersion`) whose resource changed since the caller read it. */
  PRECONDITION_FAILED = 'PRECONDITION_FAILED',
  /** Well-formed input that cannot be used (an Idempotency-Key sent again with another request). */
  UNPROCESSABLE_CONTENT = 'UNPROCESSABLE_CONTENT',
  /** Existed once and is over for good (an expired or revoked link). */
  GONE = 'GONE',
  PAYLOAD_TOO_LARGE = 'PAYLOAD_TOO_LARGE',
  RATE_LIMITED = 'RATE_LIMITED',
  METHOD_NOT_ALLOWED = 'METHOD_NOT_ALLOWED',
  UNSUPPORTED_MEDIA_TYPE = 'UNSUPPORTED_MEDIA_TYPE',
  BAD_GATEWAY = 'BAD_GATEWAY',
  SERVICE_UNAVAILABLE = 'SERVICE_UNAVAILABLE',
  INTERNAL_SERVER_ERROR = 'INTERNAL_SERVER_ERROR',
  /** A request whose `Accept` names no form the answer can take (a subscription asked for as one JSON answer). */
  NOT_ACCEPTABLE = 'NOT_ACCEPTABLE',
  /** What the gateway cannot run: `@defer` and `@stream` (Apollo Gateway delivers nothing incrementally). */
  DEFER_NOT_SUPPORTED = 'DEFER_NOT_SUPPORTED',
  STREAM_NOT_SUPPORTED = 'STREAM_NOT_SUPPORTED',
  /** A document outside the safelist (`TRUSTED_DOCUMENTS`), Apollo's code for a persisted query it does not hold. */
  PERSISTED_QUERY_NOT_FOUND = 'PERSISTED_QUERY_NOT_FOUND',
}

export const HTTP_STATUS: Record<ErrorCode, number> = {
  [ErrorCode.UNAUTHENTICATED]: 401,
  [ErrorCode.FORBIDDEN]: 403,
  [ErrorCode.NOT_FOUND]: 404,
  [ErrorCode.BAD_USER_INPUT]: 400,
  [ErrorCode.CONFLICT]: 409,
  [ErrorCode.PRECONDITION_FAILED]: 412,
  [ErrorCode.UNPROCESSABLE_CONTENT]: 422,
  [ErrorCode.GONE]: 410,
  [ErrorCode.PAYLOAD_TOO_LARGE]: 413,
  [ErrorCode.RATE_LIMITED]: 429,
  [ErrorCode.METHOD_NOT_ALLOWED]: 405,
  [ErrorCode.UNSUPPORTED_MEDIA_TYPE]: 415,
  [ErrorCode.BAD_GATEWAY]: 502,
  [ErrorCode.SERVICE_UNAVAILABLE]: 503,
  [ErrorCode.INTERNAL_SERVER_ERROR]: 500,
  [ErrorCode.NOT_ACCEPTABLE]: 406,
  [ErrorCode.DEFER_NOT_SUPPORTED]: 400,
  [ErrorCode.STREAM_NOT_SUPPORTED]: 400,
  [ErrorCode.PERSISTED_QUERY_NOT_FOUND]: 400,
};

const TITLES: Record<ErrorCode, string> = {
  [ErrorCode.UNAUTHENTICATED]: 'Unauthorized',
  [ErrorCode.FORBIDDEN]: 'Forbidden',
  [ErrorCode.NOT_FOUND]: 'Not Found',
  [ErrorCode.BAD_USER_INPUT]: 'Bad Request',
  [ErrorCode.CONFLICT]: 'Conflict',
  [ErrorCode.PRECONDITION_FAILED]: 'Precondition Failed',
  [ErrorCode.UNPROCESSABLE_CONTENT]: 'Unprocessable Content',
  [ErrorCode.GONE]: 'Gone',
  [ErrorCode.PAYLOAD_TOO_LARGE]: 'Payload Too Large',
  [ErrorCode.RATE_LIMITED]: 'Too Many Requests',
  [ErrorCode.METHOD_NOT_ALLOWED]: 'Method Not Allowed',
  [ErrorCode.UNSUPPORTED_MEDIA_TYPE]: 'Unsupported Media Type',
  [ErrorCode.BAD_GATEWAY]: 'Bad Gateway',
  [ErrorCode.SERVICE_UNAVAILABLE]: 'Service Unavailable',
  [ErrorCode.INTERNAL_SERVER_ERROR]: 'Internal Server Error',
  [ErrorCode.NOT_ACCEPTABLE]: 'Not Acceptable',
  [ErrorCode.DEFER_NOT_SUPPORTED]: 'Bad Request',
  [ErrorCode.STREAM_NOT_SUPPORTED]: 'Bad Request',
  [ErrorCode.PERSISTED_QUERY_NOT_FOUND]: 'Bad Request',
};

/** A problem with one named field of the input (`errors` of a problem body). */
export interface FieldProblem {
  field: string;
  message: string;
}

export interface AppErrorOptions {
  fields?: FieldProblem[];
  /** Seconds, for RATE_LIMITED. */
  retryAfter?: number;
  /** Extra, client-safe facts (e.g. the current state of an item on CONFLICT). */
  details?: Record<string, unknown>;
  cause?: unknown;
}

/**
 * The one exception class of the platform. It is a GraphQLError, so a resolver may throw it and
 * Apollo passes code and fields through unchanged; REST code maps it straight to a problem body.
 */
export class AppError extends GraphQLError {
  readonly code: ErrorCode;
  readonly fields: FieldProblem[];
  readonly retryAfter?: number;

  constructor(code: ErrorCode, message: string, options: AppErrorOptions = {}) {
    super(message, {
      originalError: options.cause instanceof Error ? options.cause : undefined,
      extensions: {
        code,
        ...(options.fields?.length ? { errors: options.fields } : {}),
        ...(options.retryAfter !== undefined ? { retryAfter: options.retryAfter } : {}),
        ...(options.details ?? {}),
      },
    });
    this.name = 'AppError';
    this.code = code;
    this.fields = options.fields ?? [];
    this.retryAfter = options.retryAfter;
  }

  static badInput(field: string, message: string): AppError {
    return new AppError(ErrorCode.BAD_USER_INPUT, `${field}: ${message}`, { fields: [{ field, message }] });
  }

  static notFound(what: string): AppError {
    return new AppError(ErrorCode.NOT_FOUND, `${what} not found`);
  }
}

export function isErrorCode(value: unknown): value is ErrorCode {
  return typeof value === 'string' && value in HTTP_STATUS;
}

export function httpStatusOf(code: unknown): number {
  if (isErrorCode(code)) return HTTP_STATUS[code];
  // Apollo's own codes for documents that do not parse or validate are the client's fault.
  if (code === 'GRAPHQL_PARSE_FAILED' || code === 'GRAPHQL_VALIDATION_FAILED' || code === 'BAD_REQUEST') return 400;
  return 500;
}

/** RFC 9457 problem details. */
export interface ProblemDetails {
  type: string;
  title: string;
  status: number;
  detail: string;
  code: string;
  instance?: string;
  errors?: FieldProblem[];
  [extension: string]: unknown;
}

export function problemFor(code: ErrorCode, detail: string, extra: Partial<ProblemDetails> = {}): ProblemDetails {
  return {
    type: `/problems/${code.toLowerCase().replace(/_/g, '-')}`,
    title: TITLES[code],
    status: HTTP_STATUS[code],
    detail,
    code,
    ...extra,
  };
}

const INTERNAL_MESSAGE = 'An unexpected error occurred. It has been logged with the request id.';

/**
 * What a failed body read (express.json) means for the client, or undefined when the error is
 * not about reading the request. Shared by the REST adapters, the gateway and the subgraphs.
 */
export function requestReadError(error: unknown): AppError | undefined {
  // Thrown by a body check (e.g. the UTF-8 check in express.json's verify): already the error to return.
  if (error instanceof AppError) return error;
  const { type, status } = (error ?? {}) as { type?: string; status?: number };
  if (type === 'entity.too.large') return new AppError(ErrorCode.PAYLOAD_TOO_LARGE, 'The request body is too large');
  if (type === 'entity.parse.failed')
    return new AppError(ErrorCode.BAD_USER_INPUT, 'The request body is not valid JSON');
  if (status && status >= 400 && status < 500)
    return new AppError(ErrorCode.BAD_USER_INPUT, 'The request could not be read');
  return undefined;
}

/**
 * graphql-js reports bad variables in a fixed wording; turn those into named fields so both
 * APIs (GraphQL and REST) can report which field was wrong (`Variable "$input" got invalid value 5 at "input.email"`,
 * `Field "foo" is not defined by type "ContactInput".`).
 */
export function fieldProblemsFromMessage(message: string): FieldProblem[] {
  const problems: FieldProblem[] = [];
  const unknownField = /Field "([^"]+)" is not defined by type/.exec(message);
  const atPath = /got invalid value .* at "([^"]+)"/.exec(message);
  const missingField = /Field "([^"]+)" of required type "[^"]+" was not provided/.exec(message);
  const variable = /Variable "\$([^"]+)" (?:got invalid value|of required type|of non-null type)/.exec(message);
  const detail = message.includes(';') ? message.slice(message.lastIndexOf(';') + 1).trim() : message;
  if (unknownField) problems.push({ field: unknownField[1], message: 'is not a known field' });
  else if (missingField) problems.push({ field: missingField[1], message: 'is required' });
  else if (atPath) problems.push({ field: atPath[1].split('.').slice(1).join('.') || atPath[1], message: detail });
  else if (variable) problems.push({ field: variable[1], message: detail });
  return problems;
}

/**
 * Shared `formatError` of the gateway and every subgraph: known codes pass with their fields,
 * input problems get named fields, and anything else becomes a masked INTERNAL_SERVER_ERROR
 * (the original is logged by the caller, never sent: no stack, no SQL).
 */
export function formatGraphQLError(
  formatted: GraphQLFormattedError,
  error: unknown,
  onInternal: (error: unknown) => void,
): GraphQLFormattedError {
  const code = formatted.extensions?.code;
  const original = error instanceof GraphQLError ? (error.originalError ?? error) : error;
  const validation = readValidationErrors(original);
  if (validation) {
    return {
      message: `Invalid input: ${validation.map((p) => `${p.field} ${p.message}`).join('; ')}`,
      path: formatted.path,
      extensions: { code: ErrorCode.BAD_USER_INPUT, errors: validation },
    };
  }
  if (original instanceof AppError || (isErrorCode(code) && code !== ErrorCode.INTERNAL_SERVER_ERROR)) {
    const { stacktrace: _stack, ...extensions } = formatted.extensions ?? {};
    if (code === ErrorCode.BAD_USER_INPUT && !extensions.errors) {
      const fields = fieldProblemsFromMessage(formatted.message);
      if (fields.length) extensions.errors = fields;
    }
    return { ...formatted, extensions };
  }
  if (code === 'GRAPHQL_VALIDATION_FAILED' || code === 'GRAPHQL_PARSE_FAILED' || code === 'BAD_REQUEST') {
    return {
      message: tokenLimitInCallersTerms(formatted.message),
      locations: formatted.locations,
      extensions: { code },
    };
  }
  if (code === 'PERSISTED_QUERY_NOT_SUPPORTED' || code === 'OPERATION_RESOLUTION_FAILURE') {
    return { message: formatted.message, extensions: { code } };
  }
  onInternal(error);
  // The gateway identifies the subgraph that failed, so that a frontend knows which part of its result is missing.
  const serviceName = formatted.extensions?.serviceName;
  return {
    message: INTERNAL_MESSAGE,
    path: formatted.path,
    extensions: { code: ErrorCode.INTERNAL_SERVER_ERROR, ...(typeof serviceName === 'string' ? { serviceName } : {}) },
  };
}

/** type-graphql's ArgumentValidationError carries class-validator results; name their fields. */
function readValidationErrors(error: unknown): FieldProblem[] | undefined {
  if (!error || typeof error !== 'object') return undefined;
  const holder = error as { validationErrors?: unknown; extensions?: { validationErrors?: unknown } };
  const list = holder.validationErrors ?? holder.extensions?.validationErrors;
  if (!Array.isArray(list)) return undefined;
  const problems: FieldProblem[] = [];
  const walk = (items: unknown[], prefix: string) => {
    for (const item of items as Array<{
      property: string;
      constraints?: Record<string, string>;
      children?: unknown[];
    }>) {
      const field = prefix ? `${prefix}.${item.property}` : item.property;
      for (const message of Object.values(item.constraints ?? {})) problems.push({ field, message });
      if (item.children?.length) walk(item.children, field);
    }
  };
  walk(list, '');
  return problems;
}

export { INTERNAL_MESSAGE };

/** graphql-js's rejection of a document over the token limit (`parse(..., { maxTokens })`). */
const TOKEN_LIMIT = /^Syntax Error: Document contains more tha[nt] (\d+) tokens\. Parsing aborted\.$/;

/** The token-limit rejection in the caller's terms (the document may be well formed, only too long); other messages as they are. */
function tokenLimitInCallersTerms(message: string): string {
  const limit = TOKEN_LIMIT.exec(message)?.[1];
  return limit
    ? `The document has more than ${limit} tokens, the limit: send a shorter document (fewer fields, aliases or arguments)`
    : message;
}

/** The one-line reason of anything thrown, for a log line an operator reads without the stack. */
export function reasonOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
