import { requireScope, type RuleTree } from '#lib/subgraph/shield.js';

export const mediaRules: RuleTree = {
  Query: {
    media: requireScope('media.read'),
    mediaPage: requireScope('media.read'),
    mediaFile: requireScope('media.read'),
  },
  Mutation: {
    requestMediaUpload: requireScope('media.write'),
    generateImage: requireScope('media.write'),
  },
};
