import type { SubgraphDefinition } from '#lib/subgraph/federated-schema.js';
// The resolvers load in this order so that the printed SDL (schema/social.graphql) keeps the order
// it had before the feature folders: type-graphql lists fields in the order their classes load.
import { ApiKeyResolver } from './access/api-key.resolver.js';
import { BrandResolver } from './access/brand.resolver.js';
import { CampaignResolver } from './content/campaign.resolver.js';
import { PostResolver } from './content/post.resolver.js';
import { PublishAttemptResolver } from './publishing/publish-attempt.resolver.js';
import { ContentOpsResolver } from './content/content-ops.resolver.js';
import { ContentEventResolver } from './content/content-event.resolver.js';
import { RollupResolver } from './content/rollup.resolver.js';
import { HealthResolver } from './health/health.resolver.js';
import { IntegrationResolver } from './integrations/integration.resolver.js';
import { MediaResolver } from './media/media.resolver.js';
import { ViewerResolver } from './access/viewer.resolver.js';
import { WebhookResolver } from './webhooks/webhook.resolver.js';
import { ReviewLinkResolver } from './review/review-link.resolver.js';
import { socialReferences } from './social.references.js';
import { socialRules } from './social.rules.js';

export function socialSubgraph(): SubgraphDefinition {
  return {
    resolvers: [
      ViewerResolver,
      HealthResolver,
      PostResolver,
      PublishAttemptResolver,
      ContentOpsResolver,
      ContentEventResolver,
      RollupResolver,
      BrandResolver,
      CampaignResolver,
      ApiKeyResolver,
      IntegrationResolver,
      MediaResolver,
      WebhookResolver,
      ReviewLinkResolver,
    ],
    references: socialReferences,
    rules: socialRules(),
  };
}
