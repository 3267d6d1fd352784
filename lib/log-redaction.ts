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

/** pino-http's request serializer, after its standard one: the address redacted, its parsed query and route params left out. */
export function redactRequest<Serialized extends { url?: string; query?: unknown; params?: unknown }>(req: Serialized): Serialized {
  const { query: _query, params: _params, ...rest } = req;
  return { ...rest, url: redactUrl(req.url) } as Serialized;
}
