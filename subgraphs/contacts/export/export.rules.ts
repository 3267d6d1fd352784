import type { RuleTree } from '#lib/subgraph/shield.js';
import type { ContactsScopeRules } from '../contacts.scopes.js';

export function exportRules({ scope }: ContactsScopeRules): RuleTree {
  return {
    Query: {
      // The export's walk through every contact.
      contactScroll: scope('contacts.export'),
      // Leave to stream the export's bytes (contact-export.routes.ts): the same scope as the walk.
      contactExportGrant: scope('contacts.export'),
    },
  };
}
