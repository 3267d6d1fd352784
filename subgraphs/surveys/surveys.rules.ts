import { mergeRules, type RuleTree } from '#lib/subgraph/shield.js';
import { assetsRules } from './assets/assets.rules.js';
import { exportRules } from './export/export.rules.js';
import { healthRules } from './health/health.rules.js';
import { signInRules } from './sign-in/sign-in.rules.js';
import { surveyRules } from './survey/survey.rules.js';

/** The surveys scopes of an identity token; a magic-link session, or a token without a `scope` claim, holds both. */
export const SURVEYS_SCOPES = ['surveys.read', 'surveys.write'] as const;

/**
 * Every survey operation needs a surveyor (a magic-link session, or an identity token with an
 * `email` claim) holding its scope; signing in does not. Survey and asset objects are reached only
 * through guarded root fields or `_entities`, whose reference resolvers check the caller themselves,
 * so their fields are not wrapped (that would double the cost of a list). Kept per feature
 * (`<feature>.rules.ts`) and merged here, as social's are.
 */
export function surveysRules(
  parts: RuleTree[] = [healthRules, surveyRules, assetsRules, exportRules, signInRules],
): RuleTree {
  return mergeRules(parts);
}
