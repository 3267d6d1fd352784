import { allow, type RuleTree } from '#lib/subgraph/shield.js';

export function healthRules(): RuleTree {
  // Public even when CONTACTS_AUTH=required: names and verdicts only, for probes and load balancers.
  return { Query: { contactsHealth: allow } };
}
