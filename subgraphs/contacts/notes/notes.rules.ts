import type { RuleTree } from '#lib/subgraph/shield.js';
import type { ContactsScopeRules } from '../contacts.scopes.js';

export function notesRules({ scope }: ContactsScopeRules): RuleTree {
  const access = scope('contacts.read');
  const change = scope('contacts.write');
  return {
    Query: { notes: access, notePage: access, note: access },
    Mutation: { createNote: change, updateNote: change, deleteNote: change },
  };
}
