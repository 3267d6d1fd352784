import { allow, type RuleTree } from '#lib/subgraph/shield.js';

export const healthRules: RuleTree = {
  // Public: names and verdicts only, for probes and load balancers.
  Query: { surveysHealth: allow },
};
