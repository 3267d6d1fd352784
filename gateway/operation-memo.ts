import { createRequire } from 'node:module';
import { Kind, type DocumentNode, type OperationDefinitionNode } from 'graphql';

/**
 * Keeps, per parsed operation, the federation `Operation` that Apollo Gateway builds for every request.
 *
 * `executeQueryPlan` (@apollo/gateway 2.14) turns the request's operation into federation's own
 * `Operation` (`operationFromDocument`) on every request, even when the query plan comes from the
 * plan cache: measured at 10-15 % of the CPU of a REST read by id. Its input is the operation node of
 * the document Apollo Server keeps per query text, so the same request text brings the same node,
 * and the `Operation` is only read afterwards (result shaping reads its schema, selection set, root
 * kind and variable defaults; the variables themselves are applied at each request). So it is kept
 * here per schema and operation node, weakly: a new supergraph or an evicted document lets it go.
 *
 * The gateway reaches `operationFromDocument` through the package's exports at call time, so the
 * kept version is installed there, once, by `keepFederationOperations()` as the gateway starts. Only the gateway's own call shape is kept (a
 * document led by its operation, `validate: false`); every other call goes straight through. The
 * test in test/gateway/query-plans.test.ts fails if an upgrade stops the gateway from calling it.
 */
type OperationFromDocument = (schema: object, document: DocumentNode, options?: { validate?: boolean }) => unknown;

const require = createRequire(import.meta.url);
const operations = require('@apollo/federation-internals/dist/operations.js') as {
  operationFromDocument: OperationFromDocument;
};

/** How often the gateway asked for an operation, and how often it was built rather than kept. */
export const federationOperations = { asked: 0, built: 0 };

const build = operations.operationFromDocument;
const kept = new WeakMap<object, WeakMap<OperationDefinitionNode, unknown>>();

/** Installs the kept `operationFromDocument` in federation's exports; once, whatever the number of gateways. */
export function keepFederationOperations(): void {
  if (operations.operationFromDocument === keptOperationFromDocument) return;
  operations.operationFromDocument = keptOperationFromDocument;
}

const keptOperationFromDocument: OperationFromDocument = (schema, document, options) => {
  const operation = document.definitions[0];
  if (options?.validate !== false || operation?.kind !== Kind.OPERATION_DEFINITION)
    return build(schema, document, options);
  federationOperations.asked++;
  let ofSchema = kept.get(schema);
  if (!ofSchema) kept.set(schema, (ofSchema = new WeakMap()));
  let built = ofSchema.get(operation);
  if (built === undefined) {
    built = build(schema, document, options);
    ofSchema.set(operation, built);
    federationOperations.built++;
  }
  return built;
};
