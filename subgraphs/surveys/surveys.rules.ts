import { allow, isAuthenticated, type RuleTree } from '../../lib/shield.js';

/**
 * Every survey operation needs a magic-link session; signing in does not. Survey and asset objects
 * are reached only through guarded root fields or `_entities`, whose reference resolvers check the
 * session themselves, so their fields are not wrapped (that would double the cost of a list).
 */
export function surveysRules(): RuleTree {
  return {
    Query: {
      // Public: names and verdicts only, for probes and load balancers.
      surveysHealth: allow,
      survey: isAuthenticated,
      surveys: isAuthenticated,
      surveyPage: isAuthenticated,
      surveyAsset: isAuthenticated,
      surveyExport: isAuthenticated,
      surveySession: isAuthenticated,
      surveyExportFormats: allow,
    },
    Mutation: {
      createSurvey: isAuthenticated,
      updateSurvey: isAuthenticated,
      submitSurvey: isAuthenticated,
      presignSurveyAsset: isAuthenticated,
      commitSurveyAsset: isAuthenticated,
      endSurveySession: isAuthenticated,
      requestMagicLink: allow,
      verifyMagicLink: allow,
    },
    Contact: { id: allow, surveys: isAuthenticated },
  };
}
