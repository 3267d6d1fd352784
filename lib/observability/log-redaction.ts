import { stdSerializers } from 'pino';

/**
 * What of a request's address may reach a log line. Query strings carry OAuth `code` and `state`,
 * signed storage grants and the like, and some paths carry a token as a segment (`/storage/<grant>`):
 * query values are replaced, and any segment that looks like a token (long, random-looking, not a
 * UUID) is logged as `:token`. The path's shape and the query's keys stay, which is what a reader needs.
 */
const TOKEN_SEGMENT = /^[\w.~%-]{24,}$/;
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

export function redactUrl(url: string | undefined): string | undefined {
  if (!url) return url;
  const queryAt = url.indexOf('?');
  const pathPart = queryAt === -1 ? url : url.slice(0, queryAt);
  const path = pathPart
    .split('/')
    .map((segment) => (TOKEN_SEGMENT.test(segment) && !UUID.test(segment) ? ':token' : segment))
    .join('/');
  if (queryAt === -1) return path;
  const keys = url
    .slice(queryAt + 1)
    .split('&')
    .filter(Boolean)
    .map((pair) => `${pair.split('=')[0]}=[redacted]`);
  return `${path}?${keys.join('&')}`;
}

/** The parts of a request (Node's, or Express's with `originalUrl`) that its log line names. */
interface LoggedRequest {
  id?: unknown;
  method?: string;
  url?: string;
  originalUrl?: string;
  socket?: { remoteAddress?: string };
  headers?: Record<string, unknown>;
}
/** The parts of an answer that its log line names. */
interface LoggedResponse {
  statusCode?: number;
  headersSent?: boolean;
  getHeader?: (name: string) => unknown;
}

/**
 * The `req` of every log line, read straight from the request: its id, method, redacted address,
 * the client's address and user agent. No header else: they carry credentials and cookies, and a
 * reader of the log needs none of them. An allowlist rather than a list of headers to hide, so a
 * header added tomorrow cannot leak; and it copies five fields instead of every header, which
 * pino-std-serializers' request serializer did for each request before this one threw them away.
 */
export function requestLogFields(req: LoggedRequest) {
  return {
    id: req.id,
    method: req.method,
    url: redactUrl(req.originalUrl ?? req.url),
    remoteAddress: req.socket?.remoteAddress,
    userAgent: req.headers?.['user-agent'],
  };
}

/** The `res` of every log line: the status (null when the answer never started) and the size, no header (`Set-Cookie` among them). */
export function responseLogFields(res: LoggedResponse) {
  return {
    statusCode: res.headersSent ? res.statusCode : null,
    contentLength: res.getHeader?.('content-length'),
  };
}

/** Fields of a serialized error that may hold the SQL of a failed statement or its values. */
const STATEMENT_FIELDS = ['sql', 'query', 'parameters', 'params'];

/**
 * The `err` of every log line: pino's serialization (type, message, code and the error's own fields,
 * its causes and aggregated errors) without any stack or statement. A stack names the code's files and
 * lines, which an operator needs no more than the type, message and request id to find a fault, and
 * which no one outside should learn from a log shipped elsewhere; the SQL of a failed statement may hold
 * a caller's values.
 */
export function errorLogFields(error: Error): Record<string, unknown> {
  return withoutStacksOrStatements(stdSerializers.errWithCause(error)) as Record<string, unknown>;
}

function withoutStacksOrStatements(value: unknown, depth = 0): unknown {
  if (!value || typeof value !== 'object' || depth > 5) return value;
  if (Array.isArray(value)) return value.map((item) => withoutStacksOrStatements(item, depth + 1));
  const kept: Record<string, unknown> = {};
  for (const [key, field] of Object.entries(value)) {
    if (key === 'stack' || STATEMENT_FIELDS.includes(key)) continue;
    kept[key] = withoutStacksOrStatements(field, depth + 1);
  }
  return kept;
}
