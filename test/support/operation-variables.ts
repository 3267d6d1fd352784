import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import {
  getNamedType,
  isEnumType,
  isInputObjectType,
  isListType,
  isNonNullType,
  Kind,
  parse,
  typeFromAST,
  type GraphQLInputType,
  type GraphQLSchema,
  type OperationDefinitionNode,
} from 'graphql';
import { SUPERGRAPH_PATH } from '#gateway/gateway.js';

const require = createRequire(import.meta.url);
const { Supergraph } = require('@apollo/federation-internals') as {
  Supergraph: { build(sdl: string): { apiSchema(): { toGraphQLJSSchema(): GraphQLSchema } } };
};

/** The graph clients see (the supergraph's API schema): what variables are checked against. */
export function apiSchema(): GraphQLSchema {
  return Supergraph.build(readFileSync(SUPERGRAPH_PATH, 'utf8')).apiSchema().toGraphQLJSSchema();
}

/** The one operation of a text. */
export function operationOf(text: string): OperationDefinitionNode {
  const operation = parse(text).definitions.find((definition) => definition.kind === Kind.OPERATION_DEFINITION);
  if (!operation) throw new Error('no operation');
  return operation;
}

/**
 * Variables that fit an operation and name nothing that exists: each required variable gets the
 * plainest value of its type (a new UUID for an ID, `x` for a string, the first value of an enum, an
 * input object with its required fields), optional ones are left out. Run as anyone, they reach the
 * subgraph and are refused there (no credentials, not found, invalid) or make something harmless.
 */
export function plainVariables(schema: GraphQLSchema, text: string): Record<string, unknown> {
  const variables: Record<string, unknown> = {};
  for (const definition of operationOf(text).variableDefinitions ?? []) {
    if (definition.type.kind !== Kind.NON_NULL_TYPE || definition.defaultValue) continue;
    const type = typeFromAST(schema, definition.type) as GraphQLInputType | undefined;
    if (type) variables[definition.variable.name.value] = plainValue(type);
  }
  return variables;
}

function plainValue(type: GraphQLInputType): unknown {
  if (isNonNullType(type)) return plainValue(type.ofType);
  if (isListType(type)) return [];
  const named = getNamedType(type);
  if (isEnumType(named)) return named.getValues()[0]?.value;
  if (isInputObjectType(named)) {
    const value: Record<string, unknown> = {};
    for (const field of Object.values(named.getFields())) {
      if (isNonNullType(field.type) && field.defaultValue === undefined) value[field.name] = plainValue(field.type);
    }
    return value;
  }
  switch (named.name) {
    case 'ID':
      return randomUUID();
    case 'Int':
    case 'Float':
      return 1;
    case 'Boolean':
      return false;
    case 'DateTimeISO':
      return '2030-01-01T00:00:00.000Z';
    case 'LocalDate':
      return '2030-01-01';
    case 'JSONObject':
      return {};
    default:
      return 'x';
  }
}
