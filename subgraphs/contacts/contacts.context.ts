import DataLoader from 'dataloader';
import type { EntityManager, Orm } from '../../lib/database.js';
import type { Principal } from '../../lib/identity.js';
import type { AuthContext } from '../../lib/shield.js';
import type { Contact } from './contact.entity.js';
import { ContactService } from './contact.service.js';

/** Everything a contacts resolver may use during one request: one entity manager fork, one principal. */
export interface ContactsContext extends AuthContext {
  em: EntityManager;
  contacts: ContactService;
  contactById: DataLoader<string, Contact | null>;
}

export function createContactsContext(orm: Orm, principal: Principal | null): ContactsContext {
  const em = orm.em.fork();
  const contacts = new ContactService(em);
  return {
    principal,
    em,
    contacts,
    contactById: new DataLoader(async (ids) => {
      const found = await contacts.findMany(ids);
      return ids.map((id) => found.get(id) ?? null);
    }),
  };
}
