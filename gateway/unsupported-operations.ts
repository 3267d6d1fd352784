import type { RequestHandler } from 'express';
import {
  BREAK,
  getOperationAST,
  Kind,
  OperationTypeNode,
  parse,
  visit,
  type DocumentNode,
  type ParseOptions,
} from 'graphql';
import { AppError, ErrorCode } from '#lib/errors.js';

/**
 * What the gateway cannot run: Apollo Gateway executes no incremental delivery. Left to Apollo,
 * `@defer` or `@stream` is an "Unknown directive"; a client is better told which feature is missing.
 * A subscription runs on the live graph (gateway/subscriptions/), which takes it before this check
 * when the request asks for a stream; one asked for as a single JSON answer is told how to ask.
 */
const UNSUPPORTED_DIRECTIVES: Record<string, { code: ErrorCode; message: string }> = {
  defer: {
    code: ErrorCode.DEFER_NOT_SUPPORTED,
    message: 'This gateway does not deliver results incrementally: send the query without @defer',
  },
  stream: {
    code: ErrorCode.STREAM_NOT_SUPPORTED,
    message: 'This gateway does not deliver results incrementally: send the query without @stream',
  },
};

/**
 * Only a text that names one of them is parsed here (Apollo parses every text once more, from its
 * cache); a field merely called `subscriptions` costs one parse, and is then let through.
 */
const MAY_BE_UNSUPPORTED = /\bsubscription\b|@\s*(?:defer|stream)\b/;

/** The refusal of a document the gateway cannot run, or undefined when it can run it. */
export function unsupportedIn(document: DocumentNode, operationName: string | undefined): AppError | undefined {
  const operation = getOperationAST(document, operationName);
  if (operation?.operation === OperationTypeNode.SUBSCRIPTION) {
    return new AppError(
      ErrorCode.NOT_ACCEPTABLE,
      'A subscription answers a stream of events: ask for it with Accept: multipart/mixed;subscriptionSpec="1.0" ' +
        '(Apollo Client), text/event-stream (GraphQL over SSE), or over WebSocket (graphql-transport-ws)',
    );
  }
  return incrementalDirectiveIn(document);
}

/** The refusal of `@defer` or `@stream` anywhere in the document: no transport of this gateway delivers incrementally. */
export function incrementalDirectiveIn(document: DocumentNode): AppError | undefined {
  let refusal: AppError | undefined;
  visit(document, {
    [Kind.DIRECTIVE](node) {
      const unsupported = UNSUPPORTED_DIRECTIVES[node.name.value];
      if (!unsupported) return undefined;
      refusal = new AppError(unsupported.code, unsupported.message);
      return BREAK;
    },
  });
  return refusal;
}

/**
 * Refuses, with a 400 whose code names the feature, a GraphQL request (GET or POST) that asks for what
 * the gateway cannot run. A text that does not parse goes on, for Apollo to answer its syntax error.
 */
export function refuseUnsupportedOperations(parseOptions: ParseOptions): RequestHandler {
  return (req, _res, next) => {
    const params = (req.method === 'GET' ? req.query : req.body) as Record<string, unknown> | undefined;
    const query = params?.query;
    if (typeof query !== 'string' || !MAY_BE_UNSUPPORTED.test(query)) return next();
    let document: DocumentNode;
    try {
      document = parse(query, parseOptions);
    } catch {
      return next();
    }
    next(unsupportedIn(document, typeof params?.operationName === 'string' ? params.operationName : undefined));
  };
}
