import { answerOfWrite, or, type RuleTree } from '#lib/subgraph/shield.js';
import type { ContactsScopeRules } from '../contacts.scopes.js';

export function contactRules({ required, scope }: ContactsScopeRules): RuleTree {
  const access = scope('contacts.read');
  const change = scope('contacts.write');
  return {
    Query: { contact: access, contacts: access, contactPage: access, contactEvents: access },
    Subscription: { contactEvents: access },
    Mutation: { createContact: change, updateContact: change, deleteContact: change },
    // Guards contacts reached through `_entities`. Left out when the API is open: a rule on the
    // type wraps every field of every contact in a list, and `allow` would decide nothing. An export
    // reads every field of every contact, so its scope reads them too; a change reads back the
    // contact it returns. contacts.read comes first: its error is the one a reader gets.
    ...(required ? { Contact: or(access, scope('contacts.export'), answerOfWrite(change)) } : {}),
  };
}
