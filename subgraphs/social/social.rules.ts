import { mergeRules, type RuleTree } from '#lib/subgraph/shield.js';
import { accessRules } from './access/access.rules.js';
import { contentRules } from './content/content.rules.js';
import { healthRules } from './health/health.rules.js';
import { integrationsRules } from './integrations/integrations.rules.js';
import { mediaRules } from './media/media.rules.js';
import { reviewRules } from './review/review.rules.js';
import { webhooksRules } from './webhooks/webhooks.rules.js';

/**
 * The scope table on the social schema, kept per feature (`<feature>.rules.ts`) and merged here; a
 * field ruled twice is a mistake, not an override. Root fields carry rules (deny by default for
 * every root field not named); object fields are reached only through a guarded root field, except
 * those that lead to another resource, which need that resource's scope too (`Post.brand`,
 * `Campaign.posts`); entity references check scope and reach in social.references.ts.
 */
export function socialRules(
  parts: RuleTree[] = [
    accessRules,
    contentRules,
    integrationsRules,
    mediaRules,
    healthRules,
    webhooksRules,
    reviewRules,
  ],
): RuleTree {
  return mergeRules(parts);
}
