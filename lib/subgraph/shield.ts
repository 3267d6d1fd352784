import {
  getArgumentValues,
  getVariableValues,
  isObjectType,
  Kind,
  locatedError,
  OperationTypeNode,
  type DocumentNode,
  type FieldNode,
  type GraphQLFieldResolver,
  type GraphQLObjectType,
  type FragmentDefinitionNode,
  type GraphQLError,
  type GraphQLResolveInfo,
  type GraphQLSchema,
  type OperationDefinitionNode,
  type SelectionSetNode,
} from 'graphql';
import { createRequire } from 'node:module';
import type { IMiddleware } from 'graphql-middleware';
import { AppError, ErrorCode } from '../errors.js';
import { hasScope, type Principal } from '../identity.js';

// graphql-shield 7.6.5's ES build imports `util.isUndefined`, which Node 23 removed, so it cannot
// even load on Node 24. Its CommonJS build reads that function only inside chain() and race(),
// which this project does not use. graphql itself resolves to one instance from both builds.
const require = createRequire(import.meta.url);
const { allow, and, deny, not, or, rule, shield } = require('graphql-shield') as typeof import('graphql-shield');
const { applyMiddleware } = require('graphql-middleware') as typeof import('graphql-middleware');

export { allow, and, deny, not, or, rule };
/** A graphql-shield rule or logic rule (`allow`, `and(...)`); the package does not export the union. */
export type ShieldRule = Parameters<typeof and>[0];
type IRuleFieldMap = Record<string, ShieldRule>;

/** What every subgraph context carries for the rules below. */
export interface AuthContext {
  principal: Principal | null;
  /**
   * Why a valid credential that was sent names no caller here (an identity token whose address may
   * not use the service): answered in place of UNAUTHENTICATED, which would tell the caller to sign in again.
   */
  refusal?: AppError;
}

const unauthenticated = (ctx: AuthContext) =>
  ctx.refusal ?? new AppError(ErrorCode.UNAUTHENTICATED, 'Authentication required');

// 'contextual' caches a rule's verdict per request without hashing the arguments.
export const isAuthenticated = rule({ cache: 'contextual' })((_parent, _args, ctx: AuthContext) =>
  ctx.principal ? true : unauthenticated(ctx),
);

const scopeRules = new Map<string, ShieldRule>();

/** Signed in and holding `scope` (a token without a `scope` claim holds them all). */
export function requireScope(scope: string): ShieldRule {
  let scopeRule = scopeRules.get(scope);
  if (!scopeRule) {
    // One refusal for every caller: graphql-shield evaluates every branch of `or` and `and`, so a read
    // answered under `or(read, answerOfWrite(write))` tries the write scope too, for each field of each
    // event of a live subscription; a new error (and its stack) each time cost more than the rest of the rule.
    const forbidden = new AppError(ErrorCode.FORBIDDEN, `This operation needs the ${scope} scope`);
    scopeRule = rule(`scope:${scope}`, { cache: 'contextual' })((_parent, _args, ctx: AuthContext) => {
      if (!ctx.principal) return unauthenticated(ctx);
      return hasScope(ctx.principal, scope) || forbidden;
    });
    scopeRules.set(scope, scopeRule);
  }
  return scopeRule;
}

// Only a mutation operation: the gateway fetches `_entities` for any other subgraph's answer as a query.
const isMutationOperation = rule({ cache: 'contextual' })(
  (_parent, _args, _ctx, info: GraphQLResolveInfo) => info.operation.operation === OperationTypeNode.MUTATION,
);

/**
 * Lets a type's fields through in the answer of a mutation when the caller holds `writeRule`: the
 * scope that made the change covers reading back what it returns, as the mutation's root rule has
 * already allowed the change itself. Put it beside a type's read rule (`or(read, answerOfWrite(write))`).
 */
export function answerOfWrite(writeRule: ShieldRule): ShieldRule {
  return and(isMutationOperation, writeRule);
}

export type RuleTree = Record<string, IRuleFieldMap | ShieldRule>;

/** A map of field rules (a plain object), as opposed to one rule for a whole type (a rule instance). */
const isFieldMap = (value: unknown): value is IRuleFieldMap =>
  typeof value === 'object' && value !== null && value.constructor === Object;

/**
 * A service's rule tree from its feature folders' parts (`<feature>.rules.ts`). A field ruled twice,
 * or a type ruled whole in two parts, is a mistake, not an override: it throws.
 */
export function mergeRules(parts: readonly RuleTree[]): RuleTree {
  const merged: RuleTree = {};
  for (const part of parts) {
    for (const [typeName, rules] of Object.entries(part)) {
      const existing = merged[typeName];
      if (isFieldMap(existing) && isFieldMap(rules)) {
        for (const field of Object.keys(rules))
          if (field in existing) throw new Error(`two rules for ${typeName}.${field}`);
        merged[typeName] = { ...existing, ...rules };
      } else if (existing !== undefined) {
        throw new Error(`two rules for ${typeName}`);
      } else {
        merged[typeName] = rules;
      }
    }
  }
  return merged;
}

/**
 * Guards a subgraph schema with graphql-shield, denying by default.
 *
 * Every root field (Query, Mutation, Subscription) without a rule is denied. Other types are guarded only where
 * the tree names them (entity types reached through `_entities`, and with a field map just the
 * fields it names: those that lead to another resource and need its scope); plain object fields are reached
 * only through a root field that was already allowed, so wrapping each of them would double the
 * cost of a large list and decide nothing. Federation's `_service` and `_entities` are let through:
 * the entity type's own rules apply to what `_entities` returns.
 */
export function applyShield(schema: GraphQLSchema, rules: RuleTree): GraphQLSchema {
  const { tree, everything } = shieldOf(schema, rules);
  const named = new Set(Object.keys(tree));
  const roots = new Set<string>();
  // A Subscription field's rule wraps its `subscribe`: the caller is refused when subscribing.
  for (const root of [schema.getQueryType(), schema.getMutationType(), schema.getSubscriptionType()]) {
    if (root) roots.add(root.name);
  }
  const middleware: Record<string, unknown> = {};
  for (const [typeName, fields] of Object.entries(everything)) {
    if (!(named.has(typeName) || roots.has(typeName)) || !isObjectType(schema.getType(typeName))) continue;
    // A field map on an object type guards the fields it names (one that hands out another resource,
    // which needs that resource's scope); the others stay unwrapped, as on any unnamed type.
    const own = tree[typeName];
    middleware[typeName] =
      !roots.has(typeName) && isFieldMap(own)
        ? Object.fromEntries(Object.keys(own).map((field) => [field, fields[field]]))
        : fields;
  }
  const guarded = applyMiddleware(schema, middleware as IMiddleware);
  const subscription = guarded.getSubscriptionType();
  if (subscription) guardSubscribe(subscription, everything[subscription.name] ?? {});
  return guarded;
}

type SubscribeMiddleware = (
  resolve: GraphQLFieldResolver<unknown, unknown>,
  ...args: Parameters<GraphQLFieldResolver<unknown, unknown>>
) => unknown;

/**
 * graphql-middleware wraps a field's `resolve` where it has one, and type-graphql gives every
 * subscription field one (it maps each event): the rule would then run per event, never when
 * subscribing. Each Subscription field's `subscribe` is wrapped in its rule as well, so that a caller
 * is refused at subscribe with the rule's code (and the rule still holds for every event).
 */
function guardSubscribe(subscription: GraphQLObjectType, rules: Record<string, unknown>): void {
  for (const [name, field] of Object.entries(subscription.getFields())) {
    const rule = middlewareFunction<SubscribeMiddleware>(rules[name]);
    const subscribe = field.subscribe;
    if (!rule || !subscribe) continue;
    field.subscribe = (parent, args, context, info) =>
      rule(
        (
          p: unknown = parent,
          a = args as Record<string, unknown>,
          c: unknown = context,
          i: GraphQLResolveInfo = info,
        ) => subscribe(p, a, c, i),
        parent,
        args,
        context,
        info,
      );
  }
}

/**
 * The function of one field's shield middleware: graphql-shield makes a function, or
 * `{ resolve, fragment }` for some rules (`allow` among them), which graphql-middleware accepts both.
 */
function middlewareFunction<Middleware>(made: unknown): Middleware | undefined {
  if (typeof made === 'function') return made as Middleware;
  return (made as { resolve?: Middleware } | undefined)?.resolve;
}

/** The shield's middleware of every field of `schema` under `rules` (deny by default), and the tree it was made from. */
function shieldOf(
  schema: GraphQLSchema,
  rules: RuleTree,
): { tree: RuleTree; everything: Record<string, Record<string, unknown>> } {
  const queryFields = schema.getQueryType()?.getFields() ?? {};
  const federation: IRuleFieldMap = {};
  for (const name of ['_service', '_entities']) if (queryFields[name]) federation[name] = allow;
  const tree: RuleTree = {
    ...rules,
    Query: { ...(rules.Query as IRuleFieldMap | undefined), ...federation },
    _Service: allow,
  };
  const generator = shield(tree, {
    fallbackRule: deny,
    allowExternalErrors: true,
    fallbackError: () => new AppError(ErrorCode.FORBIDDEN, 'Not allowed'),
  });
  return { tree, everything: generator.generate(schema) as Record<string, Record<string, unknown>> };
}

/**
 * Asks the shield whether the caller may run an operation's root mutation fields, without running
 * them: undefined when every field's rule holds, else the error the shield would have answered for
 * the first that does not (FORBIDDEN, UNAUTHENTICATED), at that field's path. A replayed answer
 * (lib/subgraph/idempotent-operations.ts) is given only once this says yes, so that a replay
 * never answers a caller the same request sent afresh would refuse.
 */
export type MutationRules = (
  document: DocumentNode,
  variables: Record<string, unknown> | undefined,
  contextValue: object,
) => Promise<GraphQLError | undefined>;

type FieldMiddleware = (
  resolve: () => Promise<unknown>,
  parent: unknown,
  args: Record<string, unknown>,
  contextValue: object,
  info: GraphQLResolveInfo,
) => Promise<unknown>;

/** The `MutationRules` of `schema` under `rules`: the shield's own middleware of each Mutation field, called with a resolver that does nothing. */
export function mutationRulesOf(schema: GraphQLSchema, rules: RuleTree): MutationRules {
  const mutationType = schema.getMutationType();
  const { everything } = shieldOf(schema, rules);
  const middlewareOf = (field: string) =>
    middlewareFunction<FieldMiddleware>(mutationType ? everything[mutationType.name]?.[field] : undefined);
  const ALLOWED = Symbol('allowed');
  return async (document, variables, contextValue) => {
    const operation = document.definitions.find(
      (definition): definition is OperationDefinitionNode => definition.kind === Kind.OPERATION_DEFINITION,
    );
    if (!mutationType || operation?.operation !== OperationTypeNode.MUTATION) return undefined;
    const fragments = Object.fromEntries(
      document.definitions
        .filter((definition): definition is FragmentDefinitionNode => definition.kind === Kind.FRAGMENT_DEFINITION)
        .map((fragment) => [fragment.name.value, fragment]),
    );
    const coerced = getVariableValues(schema, operation.variableDefinitions ?? [], variables ?? {});
    // Variables that do not fit were refused when the request first ran: nothing was kept for them.
    if (coerced.errors) return coerced.errors[0];
    const variableValues = coerced.coerced;
    for (const field of rootFieldsOf(operation.selectionSet, fragments)) {
      const definition = mutationType.getFields()[field.name.value];
      const middleware = middlewareOf(field.name.value);
      // A field the schema has not is refused by validation before any key is claimed; deny all the same.
      if (!definition || !middleware) return new AppError(ErrorCode.FORBIDDEN, 'Not allowed');
      const responseKey = field.alias?.value ?? field.name.value;
      const info = {
        fieldName: field.name.value,
        fieldNodes: [field],
        returnType: definition.type,
        parentType: mutationType,
        path: { prev: undefined, key: responseKey, typename: mutationType.name },
        schema,
        fragments,
        rootValue: undefined,
        operation,
        variableValues,
      } as GraphQLResolveInfo;
      const args = getArgumentValues(definition, field, variableValues);
      const verdict = await middleware(async () => ALLOWED, undefined, args, contextValue, info);
      if (verdict !== ALLOWED) {
        const refusal = verdict instanceof Error ? verdict : new AppError(ErrorCode.FORBIDDEN, 'Not allowed');
        return locatedError(refusal, [field], [responseKey]);
      }
    }
    return undefined;
  };
}

/**
 * The fields an operation selects at its root, through its fragments. `@skip` and `@include` are not
 * read: a field they leave out is checked all the same, which can only refuse more, never less.
 */
function rootFieldsOf(
  selectionSet: SelectionSetNode,
  fragments: Record<string, FragmentDefinitionNode>,
  seen = new Set<string>(),
): FieldNode[] {
  return selectionSet.selections.flatMap((selection) => {
    if (selection.kind === Kind.FIELD) return selection.name.value === '__typename' ? [] : [selection];
    if (selection.kind === Kind.INLINE_FRAGMENT) return rootFieldsOf(selection.selectionSet, fragments, seen);
    const fragment = fragments[selection.name.value];
    if (!fragment || seen.has(fragment.name.value)) return [];
    seen.add(fragment.name.value);
    return rootFieldsOf(fragment.selectionSet, fragments, seen);
  });
}
