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

/** What pino-http's standard serializers make of a request and an answer (the fields read here). */
interface SerializedRequest {
  id?: unknown;
  method?: string;
  url?: string;
  remoteAddress?: string;
  headers?: Record<string, unknown>;
}
interface SerializedResponse {
  statusCode?: number;
  headers?: Record<string, unknown>;
}

/**
 * pino-http's request serializer, after its standard one: the request id, method, redacted address,
 * the client's address and user agent. No header else: they carry credentials and cookies, and a
 * reader of the log needs none of them (writing them all also cost every request real time).
 */
export function requestLogFields(req: SerializedRequest) {
  return {
    id: req.id,
    method: req.method,
    url: redactUrl(req.url),
    remoteAddress: req.remoteAddress,
    userAgent: req.headers?.['user-agent'],
  };
}

/** pino-http's answer serializer: the status and the size, no header (`Set-Cookie` among them). */
export function responseLogFields(res: SerializedResponse) {
  return { statusCode: res.statusCode, contentLength: res.headers?.['content-length'] };
}
