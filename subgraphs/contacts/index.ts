import { optionalBearerPrincipal } from '../../lib/identity.js';
import { deriveKey, masterKey } from '../../lib/secrets.js';
import type { Deps } from '../../lib/service.js';
import { createStorage } from '../../lib/storage.js';
import { startSubgraphService, type RunningSubgraph } from '../../lib/subgraph.js';
import { Attachment } from './attachment.entity.js';
import { Contact } from './contact.entity.js';
import { createContactsContext, type ContactsSettings } from './contacts.context.js';
import { contactsSubgraph } from './contacts.subgraph.js';
import { contactsMigrations } from './migrations/index.js';
import { Note } from './note.entity.js';
import { ContactStage, Pipeline, Stage, StageMove } from './pipeline.entity.js';

export const contactsEntities = [Contact, Note, Attachment, Pipeline, Stage, ContactStage, StageMove];

export function startContactsSubgraph(deps: Deps, options: { port: number; onQuery?: (sql: string) => void }): Promise<RunningSubgraph> {
  const settings: ContactsSettings = {
    storage: createStorage(deps.config),
    maxBytes: deps.config.env.ATTACHMENT_MAX_BYTES,
    signingKey: deriveKey(masterKey(deps.config), 'contact-attachment-uploads'),
  };
  return startSubgraphService(deps, {
    service: 'contacts',
    entities: contactsEntities,
    migrations: contactsMigrations,
    definition: contactsSubgraph(deps.config),
    port: options.port,
    onQuery: options.onQuery,
    context: async (orm, req) => createContactsContext(orm, await optionalBearerPrincipal(deps.identity, req.headers.authorization), settings),
  });
}
