import { createHash } from 'node:crypto';
import type { Request } from 'express';
import { AppError, ErrorCode } from '../errors.js';

/**
 * Conditional requests (RFC 9110 §13) of the routes a table marks `versioned`: their resource has a
 * version (lib/data/versions.ts), and its strong `ETag` is that version, `"7"`. A version names the
 * record's state as the service stores it, which is what a conditional write must be checked
 * against inside the write's transaction: a hash of the answer could not be checked there, since
 * the service never sees the REST body. The check itself is the service's (`ifVersion` of the
 * mutation); this module only reads the header and hands the version on.
 */

/** The strong entity tag of a version. */
export function entityTagOf(version: number): string {
  return `"${version}"`;
}

/**
 * The strong entity tag of a JSON answer that has no version: a digest of the exact bytes Express
 * sends (`JSON.stringify`, as `res.json` writes it), so equal tags mean byte-identical bodies.
 */
export function entityTagOfBody(body: unknown): string {
  return `"${createHash('sha256')
    .update(JSON.stringify(body) ?? '')
    .digest('base64url')
    .slice(0, 27)}"`;
}

/** The answer without its `version` member, and that version (undefined when the answer has none). */
export function splitVersion(answer: unknown): { body: unknown; version?: number } {
  if (answer === null || typeof answer !== 'object' || Array.isArray(answer)) return { body: answer };
  const { version, ...body } = answer as Record<string, unknown>;
  return typeof version === 'number' ? { body, version } : { body: answer };
}

/**
 * True when a GET's `If-None-Match` names `etag` (weak comparison, RFC 9110 §13.1.2), so the answer
 * is a 304. Decided here rather than by Express's `req.fresh`, which answers in full whenever the
 * request also says `Cache-Control: no-cache`: the Fetch standard adds that to every request that
 * sets If-None-Match itself, so no browser or Node client would ever see a 304. The directive asks
 * caches to revalidate with the origin, which is what this answer is.
 */
export function ifNoneMatchHolds(header: string | undefined, etag: string): boolean {
  if (header === undefined) return false;
  const opaque = (tag: string) => tag.trim().replace(/^W\//, '');
  return header.split(',').some((tag) => tag.trim() === '*' || opaque(tag) === opaque(etag));
}

/** What a request's `If-Match` asks: nothing, any current version (`*`), or this one. */
export type IfMatch = { kind: 'absent' } | { kind: 'any' } | { kind: 'version'; version: number };

/**
 * `If-Match` as the service can check it. An entity tag that is weak (`W/"7"`, never equal under the
 * strong comparison RFC 9110 asks for) or not one of ours can match no version: that is a 412 at
 * once, and nothing is asked of the service. A list of several versions is refused (400): the
 * service checks one, and a client holds one version of a resource at a time.
 */
export function parseIfMatch(header: string | undefined): IfMatch {
  if (header === undefined || header.trim() === '') return { kind: 'absent' };
  const tags = header
    .split(',')
    .map((tag) => tag.trim())
    .filter(Boolean);
  if (tags.includes('*')) return { kind: 'any' };
  const versions = [
    ...new Set(tags.map((tag) => /^"(\d{1,9})"$/.exec(tag)?.[1]).filter((version) => version !== undefined)),
  ];
  if (versions.length > 1) throw AppError.badInput('If-Match', 'must name one entity tag (or *)');
  if (!versions.length) throw preconditionFailed('matches no version of this resource (its ETag is strong)');
  return { kind: 'version', version: Number(versions[0]) };
}

/** The 412 of a write whose `If-Match` does not hold, naming the header. */
export function preconditionFailed(message: string): AppError {
  return new AppError(ErrorCode.PRECONDITION_FAILED, `If-Match ${message}: nothing was changed`, {
    fields: [{ field: 'If-Match', message }],
  });
}

const ifMatchOfRequest = new WeakMap<Request, IfMatch>();

/** Kept by the route's runner (lib/rest/rest.ts) before the handler runs. */
export function rememberIfMatch(req: Request, ifMatch: IfMatch): void {
  ifMatchOfRequest.set(req, ifMatch);
}

export function ifMatchOf(req: Request): IfMatch {
  return ifMatchOfRequest.get(req) ?? { kind: 'absent' };
}

/**
 * The `ifVersion` a handler of a versioned write passes to its mutation: the version `If-Match`
 * names, or undefined (no header, or `*`, which any current version satisfies).
 */
export function ifMatchVersion(req: Request): number | undefined {
  const ifMatch = ifMatchOf(req);
  return ifMatch.kind === 'version' ? ifMatch.version : undefined;
}
