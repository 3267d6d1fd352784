import { allow, isAuthenticated, requireScope, type RuleTree } from '#lib/subgraph/shield.js';

/** The surveys scopes of an identity token; a magic-link session, or a token without a `scope` claim, holds both. */
export const SURVEYS_SCOPES = ['surveys.read', 'surveys.write'] as const;

/**
 * Every survey operation needs a surveyor (a magic-link session, or an identity token with an
 * `email` claim) holding its scope; signing in does not. Survey and asset objects are reached only
 * through guarded root fields or `_entities`, whose reference resolvers check the caller themselves,
 * so their fields are not wrapped (that would double the cost of a list).
 */
export function surveysRules(): RuleTree {
  const read = requireScope('surveys.read');
  const write = requireScope('surveys.write');
  return {
    Query: {
      // Public: names and verdicts only, for probes and load balancers.
      surveysHealth: allow,
      survey: read,
      surveys: read,
      surveyPage: read,
      surveyAsset: read,
      surveyExport: read,
      surveySession: read,
      surveyExportFormats: allow,
    },
    Mutation: {
      createSurvey: write,
      updateSurvey: write,
      submitSurvey: write,
      presignSurveyAsset: write,
      commitSurveyAsset: write,
      // Ending one's own session needs no scope: only a session (which holds every scope) has one to end.
      endSurveySession: isAuthenticated,
      requestMagicLink: allow,
      verifyMagicLink: allow,
    },
    Contact: { id: allow, surveys: read },
  };
}
