import { allow, type RuleTree } from '#lib/subgraph/shield.js';

export function healthRules(): RuleTree {
  // Public even when CONTACTS_AUTH=required: the names of the checks and their results only, for probes and load balancers.
  return { Query: { contactsHealth: allow } };
}
