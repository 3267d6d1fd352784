import type { Config } from '../../lib/config.js';
import type { SubgraphDefinition } from '../../lib/subgraph.js';
import { ContactResolver } from './contact.resolver.js';
import { resolveContactReference } from './contact.reference.js';
import { contactsRules } from './contacts.rules.js';

export function contactsSubgraph(config: Config): SubgraphDefinition {
  return {
    resolvers: [ContactResolver],
    references: { Contact: { __resolveReference: resolveContactReference } },
    rules: contactsRules(config),
  };
}
