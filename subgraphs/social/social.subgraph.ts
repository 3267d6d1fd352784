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

/** Every resolver class of the social subgraph; a feature appends its own (e.g. `MediaResolver`). */
// eslint-disable-next-line @typescript-eslint/no-unsafe-function-type
export const socialResolvers: [Function, ...Function[]] = [
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
];

/** Types that no resolver returns but the schema should still carry. */
// eslint-disable-next-line @typescript-eslint/no-unsafe-function-type
export const socialOrphanedTypes: Function[] = [];

export function socialSubgraph(): SubgraphDefinition {
  return {
    resolvers: socialResolvers,
    orphanedTypes: socialOrphanedTypes,
    references: socialReferences as GraphQLResolverMap<unknown>,
    rules: socialRules(),
  };
}
