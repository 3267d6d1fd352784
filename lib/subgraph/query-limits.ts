import { ApolloArmor } from '@escape.tech/graphql-armor';
import { GraphQLError, type ValidationContext } from 'graphql';
import type { Config } from '../config.js';

/** Longest document a GraphQL face parses, in tokens: a longer one is a 400 before any work is spent on it. */
export const GRAPHQL_MAX_TOKENS = 5000;

/** Most aliases and directives in one document. */
const GRAPHQL_MAX_ALIASES = 30;
const GRAPHQL_MAX_DIRECTIVES = 50;

/**
 * graphql-armor's refusals read "Syntax Error: Query Cost limit of 50000 exceeded, found 150004." for
 * a document that parsed well; the caller is told instead what was over which limit and what to change.
 * Armor names no field for any of its limits, so neither can these.
 */
const LIMIT_MESSAGES = {
  cost: (limit: string, found: string) =>
    `The query costs ${found}, over the limit of ${limit}: ask for fewer items (a smaller first or last) or fewer nested fields`,
  depth: (limit: string, found: string) =>
    `The query's depth is ${found} levels of fields, over the limit of ${limit}: ask for fewer nested levels`,
  aliases: (limit: string, found: string) =>
    `The query has ${found} aliases, over the limit of ${limit}: send fewer aliases, or split the query`,
  directives: (limit: string, found: string) =>
    `The query has ${found} directives, over the limit of ${limit}: send fewer directives`,
};

/**
 * Reports a refusal as a validation error of the document (GRAPHQL_VALIDATION_FAILED, a 400), in the
 * caller's terms. Reported to the validation context rather than thrown: a throw ends validation
 * with Apollo's internal error (500).
 */
function reportInCallersTerms(limit: keyof typeof LIMIT_MESSAGES) {
  return (context: ValidationContext | null, error: GraphQLError) => {
    const [, allowed, found] = /limit of (\d+) exceeded, found (\d+)/.exec(error.message) ?? [];
    const message = allowed ? LIMIT_MESSAGES[limit](allowed, found) : error.message.replace(/^Syntax Error: /, '');
    context?.reportError(new GraphQLError(message, { extensions: { code: 'GRAPHQL_VALIDATION_FAILED' } }));
  };
}

/** Each armor limit reports through `reportInCallersTerms` alone (armor would otherwise add its own report). */
const rejectWith = (limit: keyof typeof LIMIT_MESSAGES) => ({
  propagateOnRejection: false,
  onReject: [reportInCallersTerms(limit)],
});

/**
 * The query limits every GraphQL face applies (graphql-armor): the gateway, and each subgraph's own
 * port, which must not be the way around them. Depth, cost, aliases and directives by armor; field
 * suggestions reveal schema names, so they are kept where introspection is open anyway. The token
 * limit is graphql-js's own (`parseOptions`, for Apollo Server): armor's throws from a plugin hook,
 * which Apollo answers as an internal error (500) although the document is the client's fault.
 */
export function queryLimits(
  config: Config,
): ReturnType<ApolloArmor['protect']> & { parseOptions: { maxTokens: number } } {
  const armor = new ApolloArmor({
    maxDepth: { n: config.env.GRAPHQL_MAX_DEPTH, ...rejectWith('depth') },
    costLimit: { maxCost: config.env.GRAPHQL_MAX_COST, ...rejectWith('cost') },
    maxAliases: { n: GRAPHQL_MAX_ALIASES, ...rejectWith('aliases') },
    maxDirectives: { n: GRAPHQL_MAX_DIRECTIVES, ...rejectWith('directives') },
    maxTokens: { enabled: false },
    blockFieldSuggestion: { enabled: config.isProduction },
  }).protect();
  return { ...armor, parseOptions: { maxTokens: GRAPHQL_MAX_TOKENS } };
}

/** graphql-js's words for a document over `maxTokens` (graphql 16 writes "more that"), reported as a syntax error. */
