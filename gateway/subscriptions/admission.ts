import {
  getOperationAST,
  getVariableValues,
  GraphQLError,
  Kind,
  OperationTypeNode,
  parse,
  specifiedRules,
  validate,
  type DocumentNode,
  type GraphQLSchema,
  type ParseOptions,
  type ValidationRule,
} from 'graphql';
import { AppError, ErrorCode } from '#lib/errors.js';
import type { Safelist } from '#lib/http/document-safelist.js';
import { CheckedDocuments } from '#lib/subgraph/checked-documents.js';
import { incrementalDirectiveIn } from '../unsupported-operations.js';

/** A GraphQL request as every transport receives it: the graphql-over-http parameters. */
export interface LiveParams {
  query?: unknown;
  documentId?: unknown;
  variables?: unknown;
  operationName?: unknown;
  extensions?: unknown;
}

/** A request let through: its document, checked, and whether it is a subscription. */
export interface Admitted {
  text: string;
  document: DocumentNode;
  operationName: string | undefined;
  variables: Record<string, unknown>;
  type: OperationTypeNode;
}

export interface AdmissionRules {
  schema: GraphQLSchema;
  parseOptions: ParseOptions;
  /** graphql-armor's depth, cost, alias and directive limits, as Apollo Server applies them to queries. */
  validationRules: readonly ValidationRule[];
  /** `TRUSTED_DOCUMENTS` with the REST adapters' operations; undefined: any document. */
  safelist?: Safelist;
}

/** The rules, with the documents they checked kept by text (`admissionOf`). */
export interface Admission extends AdmissionRules {
  documents: CheckedDocuments;
}

export function admissionOf(rules: AdmissionRules): Admission {
  return { ...rules, documents: new CheckedDocuments((text) => checkDocument(text, rules)) };
}

/** Parsed, valid under the limits, and asking for no incremental delivery: a document, or why not. */
function checkDocument(text: string, rules: AdmissionRules): DocumentNode | GraphQLError[] {
  let document: DocumentNode;
  try {
    document = parse(text, rules.parseOptions);
  } catch (error) {
    return [withCode(error as GraphQLError, 'GRAPHQL_PARSE_FAILED')];
  }
  const problems = validate(rules.schema, document, [...specifiedRules, ...rules.validationRules]);
  if (problems.length) return problems.map((problem) => withCode(problem, 'GRAPHQL_VALIDATION_FAILED'));
  const incremental = incrementalDirectiveIn(document);
  return incremental ? [incremental] : document;
}

/**
 * What every query meets before it runs, for the transports that do not pass through Apollo Server:
 * the safelist, the token limit, validation with the same limits, and the refusal of `@defer` and
 * `@stream`. A refusal is a GraphQLError carrying its code, for the transport to answer as it answers
 * errors (a 400, an `error` message).
 */
export function admit(params: LiveParams, rules: Admission): Admitted | GraphQLError[] {
  const text = textOf(params, rules.safelist);
  if (text instanceof GraphQLError) return [text];
  const document = rules.documents.get(text);
  if (Array.isArray(document)) return document;
  const operationName = typeof params.operationName === 'string' ? params.operationName : undefined;
  const operation = getOperationAST(document, operationName);
  if (!operation) {
    const several = document.definitions.filter((node) => node.kind === Kind.OPERATION_DEFINITION).length > 1;
    return [
      AppError.badInput(
        'operationName',
        several ? 'name the operation to run: the document has several' : `no operation named ${operationName}`,
      ),
    ];
  }
  const variables = variablesOf(params.variables);
  if (variables instanceof GraphQLError) return [variables];
  // Variables that do not fit the operation are the caller's mistake, as Apollo Server answers them for queries.
  const coerced = getVariableValues(rules.schema, operation.variableDefinitions ?? [], variables);
  if (coerced.errors) return coerced.errors.map((error) => withCode(error, ErrorCode.BAD_USER_INPUT));
  return {
    text,
    document,
    operationName,
    variables,
    type: operation.operation,
  };
}

/** The document's text: sent as is, or named by `documentId` from the safelist; only a trusted one when there is a safelist. */
function textOf(params: LiveParams, safelist: Safelist | undefined): string | GraphQLError {
  if (params.documentId !== undefined) {
    if (!safelist) return AppError.badInput('documentId', 'this gateway runs documents sent as text: send query');
    const named = safelist.textOf(params.documentId);
    if (named instanceof GraphQLError) return named;
    if (typeof params.query === 'string' && params.query !== named) {
      return AppError.badInput('query', 'differs from the document that documentId names: send one of them');
    }
    return named;
  }
  if (typeof params.query !== 'string' || !params.query.trim()) {
    return AppError.badInput('query', 'send the GraphQL document as query (or a trusted one as documentId)');
  }
  if (safelist && !safelist.isTrustedText(params.query)) {
    return new AppError(
      ErrorCode.PERSISTED_QUERY_NOT_FOUND,
      'This document is not among the documents this gateway runs (TRUSTED_DOCUMENTS): send one of its trusted documents',
    );
  }
  return params.query;
}

/** `variables` as an object: JSON text too (a GET's query string carries it so). */
function variablesOf(value: unknown): Record<string, unknown> | GraphQLError {
  if (value === undefined || value === null || value === '') return {};
  let parsed: unknown = value;
  if (typeof value === 'string') {
    try {
      parsed = JSON.parse(value) as unknown;
    } catch {
      return AppError.badInput('variables', 'is not valid JSON');
    }
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) {
    return AppError.badInput('variables', 'must be an object');
  }
  return parsed as Record<string, unknown>;
}

function withCode(error: GraphQLError, code: string): GraphQLError {
  return new GraphQLError(error.message, {
    nodes: error.nodes,
    source: error.source,
    positions: error.positions,
    extensions: { ...error.extensions, code },
  });
}
