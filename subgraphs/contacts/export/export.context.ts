import type { ContactExportService } from './contact-export.service.js';

/** What the export resolver uses of a request's context (contacts.context.ts makes it). */
export interface ExportContext {
  exports: ContactExportService;
}
