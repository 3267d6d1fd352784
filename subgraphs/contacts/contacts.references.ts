import type { EntityReferences } from '#lib/subgraph/federated-schema.js';
import type { ContactsContext } from './contacts.context.js';

/** Contacts other subgraphs point at; batched, so a list of surveys costs one query. */
export const contactsReferences: EntityReferences<ContactsContext> = {
  Contact: {
    __resolveReference: (reference, ctx) => ctx.contactById.load(reference.id),
  },
  /** A survey the gateway asks `contact` of, with the `contactId` it fetched from the surveys subgraph. */
  Survey: {
    __resolveReference: (reference: { id: string; contactId?: string | null }) => ({
      id: reference.id,
      contactId: reference.contactId ?? null,
    }),
  },
};
