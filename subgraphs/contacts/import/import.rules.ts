import type { RuleTree } from '#lib/subgraph/shield.js';
import type { ContactsScopeRules } from '../contacts.scopes.js';

export function importRules({ scope }: ContactsScopeRules): RuleTree {
  const importing = scope('contacts.import');
  return {
    Query: { contactImport: importing, contactImportResult: importing },
    Subscription: { contactImport: importing },
    Mutation: {
      reserveContactImport: importing,
      importContacts: importing,
      cancelContactImport: importing,
      startContactImport: importing,
      cancelContactImportJob: importing,
    },
  };
}
