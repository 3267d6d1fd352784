import { and, requireScope, type RuleTree } from '#lib/subgraph/shield.js';

export const contentRules: RuleTree = {
  Query: {
    posts: requireScope('posts.read'),
    postPage: requireScope('posts.read'),
    post: requireScope('posts.read'),
    contentQueue: requireScope('posts.read'),
    contentQueuePage: requireScope('posts.read'),
    contentItem: requireScope('posts.read'),
    contentEvents: requireScope('posts.read'),
    contentDaily: requireScope('analytics.read'),
    suggestions: requireScope('suggestions.read'),
    campaigns: requireScope('campaigns.read'),
    campaign: requireScope('campaigns.read'),
  },
  Subscription: {
    contentEvents: requireScope('posts.read'),
  },
  Mutation: {
    createPost: requireScope('posts.write'),
    updatePost: requireScope('posts.write'),
    deletePost: requireScope('posts.write'),
    editContentItem: requireScope('posts.write'),
    rescheduleContentItem: requireScope('posts.write'),
    retryContentItem: requireScope('posts.write'),
    approveContentItem: requireScope('suggestions.write'),
    rejectContentItem: requireScope('suggestions.write'),
    createCampaign: requireScope('campaigns.write'),
    updateCampaign: requireScope('campaigns.write'),
    deleteCampaign: requireScope('campaigns.write'),
    // Moving a post changes the post: both resources' write scopes.
    setPostCampaign: and(requireScope('campaigns.write'), requireScope('posts.write')),
  },
  // Fields that hand out another resource need that resource's scope, as its own root field would.
  Post: {
    brand: requireScope('brands.read'),
  },
  Campaign: {
    posts: requireScope('posts.read'),
    brand: requireScope('brands.read'),
  },
};
