import { allow, requireScope, type RuleTree } from '#lib/subgraph/shield.js';

export const surveyRules: RuleTree = {
  Query: {
    survey: requireScope('surveys.read'),
    surveys: requireScope('surveys.read'),
    surveyPage: requireScope('surveys.read'),
    surveyEvents: requireScope('surveys.read'),
  },
  Mutation: {
    createSurvey: requireScope('surveys.write'),
    updateSurvey: requireScope('surveys.write'),
    submitSurvey: requireScope('surveys.write'),
  },
  Subscription: {
    surveyEvents: requireScope('surveys.read'),
  },
  Contact: { id: allow, surveys: requireScope('surveys.read') },
};
