import type { ExportService } from './export.service.js';

/** What the export resolver uses of a request's context (surveys.context.ts makes it). */
export interface ExportContext {
  exports: ExportService;
}
