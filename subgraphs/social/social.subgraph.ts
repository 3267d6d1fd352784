import type { GraphQLResolverMap } from '@apollo/subgraph';
import type { SubgraphDefinition } from '../../lib/subgraph.js';
import { ApiKeyResolver } from './access/api-key.resolver.js';
import { BrandResolver } from './access/brand.resolver.js';
import { CampaignResolver } from './content/campaign.resolver.js';
import { ContentEventResolver, ContentOpsResolver } from './content/content-ops.resolver.js';
import { HealthResolver } from './health/health.resolver.js';
import { IntegrationResolver } from './integrations/integration.resolver.js';
import { MediaResolver } from './media/media.resolver.js';
import { PostResolver } from './content/post.resolver.js';
import { socialReferences } from './social.references.js';
import { socialRules } from './social.rules.js';
import { ViewerResolver } from './access/viewer.resolver.js';

export function socialSubgraph(): SubgraphDefinition {
  return {
    resolvers: [
      ViewerResolver,
      HealthResolver,
      PostResolver,
      ContentOpsResolver,
      ContentEventResolver,
      BrandResolver,
      CampaignResolver,
      ApiKeyResolver,
      IntegrationResolver,
      MediaResolver,
    ],
    references: socialReferences as GraphQLResolverMap<unknown>,
    rules: socialRules(),
  };
}
