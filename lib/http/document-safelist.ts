import type { RequestHandler } from 'express';
import { AppError, ErrorCode } from '../errors.js';
import { documentHash, SHA256_PREFIX, type TrustedDocuments } from '../trusted-documents.js';

export const notTrusted = (what: string) =>
  new AppError(
    ErrorCode.PERSISTED_QUERY_NOT_FOUND,
    `${what} is not among the documents this gateway runs (TRUSTED_DOCUMENTS): send one of its trusted documents`,
  );

/** The request's GraphQL parameters: a POST's JSON body, or a GET's query string (whose `extensions` is JSON text). */
interface GraphQLParams {
  query?: unknown;
  documentId?: unknown;
  extensions?: unknown;
}

function apqHashOf(extensions: unknown): string | undefined {
  let value = extensions;
  if (typeof value === 'string') {
    try {
      value = JSON.parse(value);
    } catch {
      return undefined;
    }
  }
  const hash = (value as { persistedQuery?: { sha256Hash?: unknown } } | undefined)?.persistedQuery?.sha256Hash;
  return typeof hash === 'string' ? hash : undefined;
}

/** The safelist's two questions, for transports that are no Express route (the live graph's WebSocket). */
export interface Safelist {
  /** Whether a document sent as text may run. */
  isTrustedText: (text: string) => boolean;
  /** The text a `documentId` (`sha256:<hex>` or bare hex) names, or the refusal of an unknown one. */
  textOf: (documentId: unknown) => string | AppError;
}

export function safelistOf(trusted: TrustedDocuments, alwaysTrusted: Iterable<string>): Safelist {
  const alwaysTrustedTexts = new Set(alwaysTrusted);
  return {
    isTrustedText: (text) => alwaysTrustedTexts.has(text) || trusted.has(documentHash(text)),
    textOf: (documentId) => {
      const id = typeof documentId === 'string' ? documentId : '';
      const text = trusted.get(id.startsWith(SHA256_PREFIX) ? id.slice(SHA256_PREFIX.length) : id);
      return text ?? notTrusted(`The document ${JSON.stringify(id).slice(0, 100)}`);
    },
  };
}

/**
 * With a safelist, runs only the documents in it, plus `alwaysTrusted` (the REST adapters' own
 * operations, which reach the gateway over HTTP when it is deployed apart). A document is named by
 * `documentId` (`sha256:<hex>`, as the client preset's `__meta__.hash` has it, or the bare hex), by an APQ
 * `sha256Hash`, or sent as text whose hash is trusted; the text is then handed to Apollo as `query`,
 * which knows no `documentId`. Anything else is a 400 `PERSISTED_QUERY_NOT_FOUND` before Apollo parses
 * it. An APQ registration (text and hash) is a text like any other: an unknown one is refused, so
 * Apollo's APQ cache only ever holds trusted texts and a hash-only request may go on to it.
 */
export function refuseUntrustedDocuments(trusted: TrustedDocuments, alwaysTrusted: Iterable<string>): RequestHandler {
  const safelist = safelistOf(trusted, alwaysTrusted);
  const { isTrustedText } = safelist;
  return (req, _res, next) => {
    const isGet = req.method === 'GET';
    const search = isGet ? new URL(req.originalUrl, 'http://gateway').searchParams : undefined;
    const params: GraphQLParams = search
      ? {
          query: search.get('query') ?? undefined,
          documentId: search.get('documentId') ?? undefined,
          extensions: search.get('extensions') ?? undefined,
        }
      : ((req.body ?? {}) as GraphQLParams);
    let text: string | undefined;
    if (params.documentId !== undefined) {
      const named = safelist.textOf(params.documentId);
      if (named instanceof AppError) return next(named);
      text = named;
      if (typeof params.query === 'string' && params.query !== text) {
        return next(AppError.badInput('query', 'differs from the document that documentId names: send one of them'));
      }
    } else if (typeof params.query === 'string') {
      if (!isTrustedText(params.query)) return next(notTrusted('This document'));
      return next();
    } else {
      const hash = apqHashOf(params.extensions);
      // A hash-only APQ request: Apollo's cache holds trusted texts only (see above).
      if (hash === undefined) return next();
      text = trusted.get(hash);
      if (text === undefined) return next();
    }
    if (search) {
      search.delete('documentId');
      search.set('query', text);
      req.url = `${req.path}?${search.toString()}`;
    } else {
      const { documentId: _named, ...rest } = params;
      req.body = { ...rest, query: text };
    }
    next();
  };
}
