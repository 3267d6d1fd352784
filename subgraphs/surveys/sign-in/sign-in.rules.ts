import { allow, isAuthenticated, requireScope, type RuleTree } from '#lib/subgraph/shield.js';

export const signInRules: RuleTree = {
  Query: { surveySession: requireScope('surveys.read') },
  Mutation: {
    // Ending one's own session needs no scope: only a session (which holds every scope) has one to end.
    endSurveySession: isAuthenticated,
    requestMagicLink: allow,
    verifyMagicLink: allow,
  },
};
