import type { Deps } from '#lib/service.js';
import { startSubgraphService, type RunningSubgraph, type SubgraphListenOptions } from '#lib/subgraph/subgraph.js';
import { contactExportStreamRouter } from './export/contact-export.routes.js';
import { createContactsContext } from './contacts.context.js';
import { contactsEntities } from './contacts.entities.js';
import { createContactsRuntime, type ContactsRuntime } from './contacts.runtime.js';
import { contactsSubgraph } from './contacts.subgraph.js';
import { contactsMigrations } from './migrations/index.js';

export function startContactsSubgraph(
  deps: Deps,
  options: SubgraphListenOptions,
): Promise<RunningSubgraph<ContactsRuntime>> {
  return startSubgraphService(deps, {
    service: 'contacts',
    entities: contactsEntities,
    migrations: contactsMigrations,
    definition: contactsSubgraph(deps.config),
    runtime: (orm) => createContactsRuntime(deps, orm),
    context: createContactsContext,
    routes: (runtime, orm) => contactExportStreamRouter(orm, runtime.exports, deps.logger),
    ...options,
  });
}
