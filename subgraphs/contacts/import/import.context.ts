import type { ContactImportService } from './contact-import.service.js';

/** What the import resolvers use of a request's context (contacts.context.ts makes it). */
export interface ImportContext {
  imports: ContactImportService;
}
