import { requireScope, type RuleTree } from '#lib/subgraph/shield.js';

export const assetsRules: RuleTree = {
  Query: { surveyAsset: requireScope('surveys.read') },
  Mutation: {
    presignSurveyAsset: requireScope('surveys.write'),
    commitSurveyAsset: requireScope('surveys.write'),
  },
};
