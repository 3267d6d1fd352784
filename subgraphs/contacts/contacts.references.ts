import type { EntityReferences } from '#lib/subgraph/federated-schema.js';
import type { ContactsContext } from './contacts.context.js';

/** Contacts other subgraphs point at; batched, so a list of surveys costs one query. */
export const contactsReferences: EntityReferences<ContactsContext> = {
  Contact: {
    __resolveReference: (reference, ctx) => ctx.contactById.load(reference.id),
  },
};
