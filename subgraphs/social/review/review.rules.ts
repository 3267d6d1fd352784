import { allow, requireScope, type RuleTree } from '#lib/subgraph/shield.js';

/**
 * Making and revoking links is the owner's (suggestions.write); the token is the whole credential
 * of the three public fields, which the review link service limits per client.
 */
export const reviewRules: RuleTree = {
  Query: {
    reviewByToken: allow,
  },
  Mutation: {
    createReviewLink: requireScope('suggestions.write'),
    revokeReviewLink: requireScope('suggestions.write'),
    approveByReviewLink: allow,
    rejectByReviewLink: allow,
  },
};
