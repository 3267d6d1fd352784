import type { RuleTree } from '#lib/subgraph/shield.js';
import type { ContactsScopeRules } from '../contacts.scopes.js';

/** Finding duplicates reads contacts: contacts.read. (Contact.duplicates is guarded with the Contact type.) */
export function duplicatesRules({ scope }: ContactsScopeRules): RuleTree {
  const access = scope('contacts.read');
  return { Query: { contactDuplicates: access, contactDuplicatePage: access } };
}
