import type { Contact } from './contact.entity.js';
import type { ContactsContext } from './contacts.context.js';

/** Resolves a Contact another subgraph points at; batched, so a list of surveys costs one query. */
export function resolveContactReference(reference: Pick<Contact, 'id'>, ctx: ContactsContext): Promise<Contact | null> {
  return ctx.contactById.load(reference.id);
}
