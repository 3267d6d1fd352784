import { isObjectType, OperationTypeNode, type GraphQLResolveInfo, type GraphQLSchema } from 'graphql';
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
    scopeRule = rule(`scope:${scope}`, { cache: 'contextual' })((_parent, _args, ctx: AuthContext) => {
      if (!ctx.principal) return unauthenticated(ctx);
      return (
        hasScope(ctx.principal, scope) || new AppError(ErrorCode.FORBIDDEN, `This operation needs the ${scope} scope`)
      );
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
export const isFieldMap = (value: unknown): value is IRuleFieldMap =>
  typeof value === 'object' && value !== null && value.constructor === Object;

/**
 * Guards a subgraph schema with graphql-shield, denying by default.
 *
 * Every root field (Query, Mutation) without a rule is denied. Other types are guarded only where
 * the tree names them (entity types reached through `_entities`, and with a field map just the
 * fields it names: those that lead to another resource and need its scope); plain object fields are reached
 * only through a root field that was already allowed, so wrapping each of them would double the
 * cost of a large list and decide nothing. Federation's `_service` and `_entities` are let through:
 * the entity type's own rules apply to what `_entities` returns.
 */
export function applyShield(schema: GraphQLSchema, rules: RuleTree): GraphQLSchema {
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
  const everything = generator.generate(schema) as Record<string, Record<string, unknown>>;
  const guarded = new Set(Object.keys(tree));
  const roots = new Set<string>();
  for (const root of [schema.getQueryType(), schema.getMutationType()]) if (root) roots.add(root.name);
  const middleware: Record<string, unknown> = {};
  for (const [typeName, fields] of Object.entries(everything)) {
    if (!(guarded.has(typeName) || roots.has(typeName)) || !isObjectType(schema.getType(typeName))) continue;
    // A field map on an object type guards the fields it names (one that hands out another resource,
    // which needs that resource's scope); the others stay unwrapped, as on any unnamed type.
    const own = tree[typeName];
    middleware[typeName] =
      !roots.has(typeName) && isFieldMap(own)
        ? Object.fromEntries(Object.keys(own).map((field) => [field, fields[field]]))
        : fields;
  }
  return applyMiddleware(schema, middleware as IMiddleware);
}
