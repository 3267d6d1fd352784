import { allow, requireScope, type RuleTree } from '#lib/subgraph/shield.js';

export const exportRules: RuleTree = {
  Query: { surveyExport: requireScope('surveys.read'), surveyExportFormats: allow },
};
