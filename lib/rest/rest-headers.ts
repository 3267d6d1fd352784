import type { Request } from 'express';
import type { DocumentedRoute } from './route-doc.js';

/**
 * Headers a REST answer carries beside its body, from what the route table declares (lib/rest.ts):
 * `Location` of a 201 and `Link` of a list. Their URLs are root-relative (RFC 9110 and RFC 8288
 * resolve them against the request's URL): the service cannot know the scheme and host a client
 * reached it by behind a proxy, and a relative reference stays right under any of them.
 */

/** The created resource's path: each `{field}` of the route's `created` template filled from the answer. */
export function locationOf(template: string, answer: unknown): string | undefined {
  const fields = (answer ?? {}) as Record<string, unknown>;
  let complete = true;
  const location = template.replace(/\{(\w+)\}/g, (_match, name: string) => {
    const value = fields[name];
    if (typeof value !== 'string' && typeof value !== 'number') complete = false;
    return encodeURIComponent(String(value));
  });
  return complete ? location : undefined;
}

/** The request's own path and query with `changes` applied (other query parameters kept as sent). */
function linkTo(req: Request, changes: Record<string, string>): string {
  const url = new URL(req.originalUrl, 'http://service.invalid');
  for (const [name, value] of Object.entries(changes)) url.searchParams.set(name, value);
  return `${url.pathname}${url.search}`;
}

function linkHeader(links: [rel: string, target: string][]): string | undefined {
  return links.length ? links.map(([rel, target]) => `<${target}>; rel="${rel}"`).join(', ') : undefined;
}

interface PageAnswer {
  page: number;
  limit: number;
  total: number;
  totalExact?: false;
}

function isPageAnswer(answer: unknown): answer is PageAnswer {
  const page = answer as Partial<PageAnswer> | null;
  return (
    typeof page?.page === 'number' && typeof page.limit === 'number' && page.limit > 0 && typeof page.total === 'number'
  );
}

/**
 * RFC 8288 `Link` of a page `{ page, limit, total }`: first always, prev when a page comes before,
 * next when one follows, last when the total is exact (an estimated total names no last page).
 */
export function pageLinks(req: Request, answer: unknown): string | undefined {
  if (!isPageAnswer(answer)) return undefined;
  const { page, limit, total } = answer;
  const lastPage = Math.max(1, Math.ceil(total / limit));
  const to = (number: number) => linkTo(req, { page: String(number), limit: String(limit) });
  const links: [string, string][] = [['first', to(1)]];
  if (page > 1) links.push(['prev', to(Math.min(page - 1, lastPage))]);
  if (page * limit < total) links.push(['next', to(page + 1)]);
  if (answer.totalExact !== false) links.push(['last', to(lastPage)]);
  return linkHeader(links);
}

/** RFC 8288 `Link` of a cursor list: next only (a cursor names no previous or last page), while `nextCursor` is set. */
export function cursorLinks(req: Request, answer: unknown, cursorParameter: string): string | undefined {
  const next = (answer as { nextCursor?: unknown } | null)?.nextCursor;
  return typeof next === 'string' ? linkHeader([['next', linkTo(req, { [cursorParameter]: next })]]) : undefined;
}

/** The `Location` and `Link` headers of an answer of `route` with this status and body. */
export function answerHeaders(
  route: Pick<DocumentedRoute, 'created' | 'list'>,
  req: Request,
  status: number,
  answer: unknown,
): Record<string, string> {
  const headers: Record<string, string> = {};
  const location = status === 201 && route.created ? locationOf(route.created, answer) : undefined;
  if (location) headers.location = location;
  const link =
    status === 200 && route.list
      ? route.list === 'pages'
        ? pageLinks(req, answer)
        : cursorLinks(req, answer, route.list.cursorParameter)
      : undefined;
  if (link) headers.link = link;
  return headers;
}

/**
 * `WWW-Authenticate` of a 401 (RFC 6750): every REST service takes bearer tokens (the surveys
 * session token too, as a bearer or a cookie), and a token that was sent and refused says so.
 */
export function bearerChallenge(bearerError?: unknown): string {
  return bearerError === 'invalid_token' ? 'Bearer error="invalid_token"' : 'Bearer';
}
