import { allow, type RuleTree } from '#lib/subgraph/shield.js';

export const healthRules: RuleTree = {
  // Public: the names of the checks and their results only, for probes and load balancers.
  Query: { socialHealth: allow },
};
