import { optionalBearerPrincipal } from '../../lib/identity.js';
import type { Deps } from '../../lib/service.js';
import { startSubgraphService, type RunningSubgraph } from '../../lib/subgraph.js';
import { Contact } from './contact.entity.js';
import { createContactsContext } from './contacts.context.js';
import { contactsSubgraph } from './contacts.subgraph.js';
import { contactsMigrations } from './migrations/index.js';

export const contactsEntities = [Contact];

export function startContactsSubgraph(deps: Deps, options: { port: number; onQuery?: (sql: string) => void }): Promise<RunningSubgraph> {
  return startSubgraphService(deps, {
    service: 'contacts',
    entities: contactsEntities,
    migrations: contactsMigrations,
    definition: contactsSubgraph(deps.config),
    port: options.port,
    onQuery: options.onQuery,
    context: async (orm, req) => createContactsContext(orm, await optionalBearerPrincipal(deps.identity, req.headers.authorization)),
  });
}
