import { allow, isAuthenticated, requireScope, type RuleTree, type ShieldRule } from '../../lib/shield.js';
import { integrationRules } from './integrations/integrations.rules.js';
import { mediaRules } from './media/media.rules.js';

/**
 * DESIGN.md's scope table on the social schema. Only root fields carry rules (deny by default for
 * every root field not named); object fields are reached only through a guarded root field, and
 * entity references check scope and reach in their `__resolveReference`.
 */
const scope = requireScope;

export const coreRules: RuleTree = {
  Query: {
    viewer: isAuthenticated,
    socialHealth: allow,
    posts: scope('posts.read'),
    postPage: scope('posts.read'),
    post: scope('posts.read'),
    contentQueue: scope('posts.read'),
    contentQueuePage: scope('posts.read'),
    contentItem: scope('posts.read'),
    contentEvents: scope('posts.read'),
    contentDaily: scope('analytics.read'),
    suggestions: scope('suggestions.read'),
    brands: scope('brands.read'),
    brandPage: scope('brands.read'),
    brandSettings: scope('settings.read'),
    campaigns: scope('campaigns.read'),
    campaign: scope('campaigns.read'),
    // Bearer-only is checked by the service: it needs the principal's kind, not a scope.
    apiKeys: isAuthenticated,
  },
  Mutation: {
    createPost: scope('posts.write'),
    updatePost: scope('posts.write'),
    deletePost: scope('posts.write'),
    editContentItem: scope('posts.write'),
    rescheduleContentItem: scope('posts.write'),
    retryContentItem: scope('posts.write'),
    approveContentItem: scope('suggestions.write'),
    rejectContentItem: scope('suggestions.write'),
    createBrand: scope('settings.write'),
    updateBrandSettings: scope('settings.write'),
    createCampaign: scope('campaigns.write'),
    updateCampaign: scope('campaigns.write'),
    deleteCampaign: scope('campaigns.write'),
    setPostCampaign: scope('campaigns.write'),
    createApiKey: isAuthenticated,
    revokeApiKey: isAuthenticated,
  },
};

/** Rule trees kept per feature (core, integrations, media) and merged here; a field ruled twice is a mistake, not an override. */
export function socialRules(parts: RuleTree[] = [coreRules, integrationRules, mediaRules]): RuleTree {
  const isMap = (value: unknown): value is Record<string, ShieldRule> => typeof value === 'object' && value !== null && value.constructor === Object;
  const merged: Record<string, Record<string, ShieldRule> | ShieldRule> = {};
  for (const part of parts) {
    for (const [typeName, rules] of Object.entries(part)) {
      const existing = merged[typeName];
      if (isMap(existing) && isMap(rules)) {
        for (const field of Object.keys(rules)) if (field in existing) throw new Error(`two rules for ${typeName}.${field}`);
        merged[typeName] = { ...existing, ...rules };
      } else if (existing !== undefined) {
        throw new Error(`two rules for ${typeName}`);
      } else {
        merged[typeName] = rules;
      }
    }
  }
  return merged as RuleTree;
}
