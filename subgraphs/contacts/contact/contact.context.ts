import type DataLoader from 'dataloader';
import type { Contact } from './contact.entity.js';
import type { ContactService } from './contact.service.js';
import type { ContactEventService } from './contact-event.service.js';

/** What the contact resolvers and references use of a request's context (contacts.context.ts makes it). */
export interface ContactContext {
  contacts: ContactService;
  /** Contact events as they commit (`contactEvents`). */
  contactEvents: ContactEventService;
  contactById: DataLoader<string, Contact | null>;
}
