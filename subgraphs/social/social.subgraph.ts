import type { GraphQLResolverMap } from '@apollo/subgraph';
import type { SubgraphDefinition } from '../../lib/subgraph.js';
import { ApiKeyResolver } from './api-key.resolver.js';
import { BrandResolver } from './brand.resolver.js';
import { CampaignResolver } from './campaign.resolver.js';
import { ContentEventResolver, ContentOpsResolver } from './content-ops.resolver.js';
import { HealthResolver } from './health.resolver.js';
import { IntegrationResolver } from './integration.resolver.js';
import { MediaResolver } from './media.resolver.js';
import { PostResolver } from './post.resolver.js';
import { socialReferences } from './social.references.js';
import { socialRules } from './social.rules.js';
import { ViewerResolver } from './viewer.resolver.js';

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
