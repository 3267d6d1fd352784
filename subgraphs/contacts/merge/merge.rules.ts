import type { RuleTree } from '#lib/subgraph/shield.js';
import type { ContactsScopeRules } from '../contacts.scopes.js';

/** A merge and its undo change contacts: contacts.write; the contact of a survey is read: contacts.read. */
export function mergingRules({ scope }: ContactsScopeRules): RuleTree {
  const change = scope('contacts.write');
  return {
    Mutation: { mergeContacts: change, undoContactMerge: change },
    Survey: { contact: scope('contacts.read') },
  };
}
