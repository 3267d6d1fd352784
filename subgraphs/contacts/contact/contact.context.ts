import type DataLoader from 'dataloader';
import type { Contact } from './contact.entity.js';
import type { ContactService } from './contact.service.js';

/** What the contact resolvers and references use of a request's context (contacts.context.ts makes it). */
export interface ContactContext {
  contacts: ContactService;
  contactById: DataLoader<string, Contact | null>;
}
