import { createRequire } from 'node:module';
import {
  getNamedType,
  isListType,
  isNonNullType,
  isObjectType,
  Kind,
  type FragmentDefinitionNode,
  type GraphQLError,
  type GraphQLObjectType,
  type GraphQLOutputType,
  type OperationDefinitionNode,
  type SelectionSetNode,
} from 'graphql';

/**
 * Apollo Gateway's result shaping (`computeResponse` in @apollo/gateway 2.14's resultShaping.ts) for
 * the answer of one fetch, compiled once per operation: the same fields in the operation's order
 * (first occurrence first, as its merged selection sets have them), `__typename` from the type, a
 * field the subgraph left out as null, and a null in a non-null place bubbling up to the nearest
 * nullable parent with the same "Cannot return null" error (which the gateway states only when the
 * fetch itself had no error). What it does not know how to shape exactly (an abstract type, `@skip`
 * and `@include`, introspection fields, a fragment on another type) makes the operation ineligible,
 * so it keeps the full path.
 */

const require = createRequire(import.meta.url);
const federation = require('@apollo/federation-internals') as {
  ERRORS: { INVALID_GRAPHQL: { err(message: string, options: { path: (string | number)[] }): GraphQLError } };
};

interface ShapedField {
  responseName: string;
  /** `__typename`: answered from the parent's type, not from the subgraph. */
  typename: boolean;
  type: GraphQLOutputType;
  /** The merged selection of an object-typed field. */
  selection?: ShapedSelection;
}

interface ShapedSelection {
  typeName: string;
  fields: ShapedField[];
}

/** Thrown while compiling: the operation keeps the full path. */
export class NotShapeable extends Error {}

/** Compiles the selection of `operation` on `rootType`, or throws `NotShapeable`. */
export function compileShape(
  rootType: GraphQLObjectType,
  operation: OperationDefinitionNode,
  fragments: Record<string, FragmentDefinitionNode>,
): ShapedSelection {
  return compileSelection(rootType, [operation.selectionSet], fragments);
}

function compileSelection(
  parent: GraphQLObjectType,
  sets: SelectionSetNode[],
  fragments: Record<string, FragmentDefinitionNode>,
): ShapedSelection {
  const merged = new Map<string, { field: ShapedField; sets: SelectionSetNode[] }>();
  const collect = (set: SelectionSetNode) => {
    for (const selection of set.selections) {
      if (selection.directives?.length) throw new NotShapeable('a directive');
      if (selection.kind === Kind.FIELD) {
        const name = selection.name.value;
        const responseName = selection.alias?.value ?? name;
        let entry = merged.get(responseName);
        if (!entry) {
          if (name.startsWith('__') && name !== '__typename') throw new NotShapeable('introspection');
          const definition = name === '__typename' ? undefined : parent.getFields()[name];
          if (name !== '__typename' && !definition) throw new NotShapeable(`unknown field ${name}`);
          // `__typename` has no definition here, and its type is never read: it is answered from the parent.
          const type = definition?.type ?? parent;
          entry = { field: { responseName, typename: name === '__typename', type }, sets: [] };
          merged.set(responseName, entry);
        }
        if (selection.selectionSet) entry.sets.push(selection.selectionSet);
        continue;
      }
      const fragment =
        selection.kind === Kind.INLINE_FRAGMENT
          ? selection
          : (fragments[selection.name.value] ?? failWith(`unknown fragment ${selection.name.value}`));
      const condition = fragment.typeCondition?.name.value;
      if (condition !== undefined && condition !== parent.name) throw new NotShapeable('a fragment on another type');
      collect(fragment.selectionSet);
    }
  };
  for (const set of sets) collect(set);
  const fields: ShapedField[] = [];
  for (const { field, sets: fieldSets } of merged.values()) {
    if (!field.typename) {
      const named = getNamedType(field.type);
      if (fieldSets.length) {
        if (!isObjectType(named)) throw new NotShapeable('an abstract type');
        field.selection = compileSelection(named, fieldSets, fragments);
      }
    }
    fields.push(field);
  }
  return { typeName: parent.name, fields };
}

function failWith(reason: string): never {
  throw new NotShapeable(reason);
}

/** What `shape` answers: the data, and the errors of values the gateway would refuse (`valueCompletion`). */
export interface Shaped {
  data: Record<string, unknown> | null;
  errors: GraphQLError[];
}

/** A null that bubbles up to the nearest nullable parent. */
const BUBBLE = Symbol('bubble');

/**
 * Shapes a fetch's data as `computeResponse` does. A subgraph that answered no data (undefined or
 * null) leaves Apollo Gateway's empty result as it was: every root field is then null, and a non-null
 * one nulls the whole data.
 */
export function shape(selection: ShapedSelection, input: unknown): Shaped {
  const errors: GraphQLError[] = [];
  const data = shapeObject(selection, (input ?? {}) as Record<string, unknown>, [], errors);
  return { data: data === BUBBLE ? null : data, errors };
}

function shapeObject(
  selection: ShapedSelection,
  input: Record<string, unknown>,
  path: (string | number)[],
  errors: GraphQLError[],
): Record<string, unknown> | typeof BUBBLE {
  const output: Record<string, unknown> = {};
  for (const field of selection.fields) {
    if (field.typename) {
      output[field.responseName] = selection.typeName;
      continue;
    }
    const value = Object.hasOwn(input, field.responseName) ? (input[field.responseName] ?? null) : null;
    path.push(field.responseName);
    const shaped = shapeValue(field.type, field.selection, value, path, errors, selection.typeName);
    path.pop();
    if (shaped === BUBBLE) return BUBBLE;
    output[field.responseName] = shaped;
  }
  return output;
}

function shapeValue(
  type: GraphQLOutputType,
  selection: ShapedSelection | undefined,
  value: unknown,
  path: (string | number)[],
  errors: GraphQLError[],
  parentName: string,
): unknown {
  if (isNonNullType(type)) {
    const before = errors.length;
    const shaped = shapeValue(type.ofType, selection, value, path, errors, parentName);
    if (shaped !== null && shaped !== BUBBLE) return shaped;
    if (errors.length === before) {
      const last = path[path.length - 1];
      const where =
        typeof last === 'string'
          ? `field ${parentName}.${last}`
          : `array element of type ${String(type.ofType)} at index ${last}`;
      errors.push(
        federation.ERRORS.INVALID_GRAPHQL.err(`Cannot return null for non-nullable ${where}.`, { path: [...path] }),
      );
    }
    return BUBBLE;
  }
  if (value === null || value === BUBBLE) return null;
  if (isListType(type)) {
    if (!Array.isArray(value))
      throw new Error(`Invalid non-list value returned by subgraph for list type ${String(type)}`);
    const list: unknown[] = new Array(value.length);
    let bubbled = false;
    for (let index = 0; index < value.length; index++) {
      path.push(index);
      const element = shapeValue(type.ofType, selection, value[index], path, errors, parentName);
      path.pop();
      if (element === BUBBLE) {
        bubbled = true;
        list[index] = null;
      } else list[index] = element;
    }
    return bubbled ? null : list;
  }
  if (selection) {
    const shaped = shapeObject(selection, value as Record<string, unknown>, path, errors);
    return shaped === BUBBLE ? null : shaped;
  }
  return value;
}
