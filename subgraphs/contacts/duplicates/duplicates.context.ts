import type DataLoader from 'dataloader';
import type { DuplicateService, DuplicatesOf } from './duplicate.service.js';
import type { ContactDuplicate } from './duplicate.types.js';

/** What the duplicate resolvers use of a request's context (contacts.context.ts makes it). */
export interface DuplicatesContext {
  duplicates: DuplicateService;
  /** Duplicates of the contacts a list asks about, in one statement per page size. */
  duplicatesOf: DataLoader<DuplicatesOf, ContactDuplicate[], string>;
}
