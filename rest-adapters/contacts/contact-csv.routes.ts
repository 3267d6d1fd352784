import { receiveUpload } from '../../lib/storage/multipart-upload.js';
import type { RestRoute, RunOperation } from '../../lib/rest/rest.js';
import { importFormSchema, importResultSchema } from './contacts.bodies.js';
import type { ObjectStorage } from '../../lib/storage/storage.js';
import {
  CancelContactImportDocument,
  ImportContactsDocument,
  ReserveContactImportDocument,
} from './operations.generated.js';

/**
 * CSV import, on the platform's upload protocol (`lib/storage/uploads.ts`): the subgraph reserves
 * the upload (a staging key and IMPORT_MAX_BYTES), the file streams into that key, and one operation
 * commits and imports it (rules, validation and batches are the subgraph's); a request that fails
 * before cancels the reservation. The export is contact-export.routes.ts.
 */
export function contactCsvRoutes(run: RunOperation, storage: ObjectStorage): RestRoute[] {
  return [
    {
      method: 'post',
      path: '/api/contacts/import',
      summary: 'Import contacts from a CSV file (multipart: file, optional mapping as JSON column -> field)',
      doc: {
        operationId: 'importContacts',
        tag: 'contacts',
        multipart: importFormSchema,
        answer: { status: 200, description: 'What the import did, row by row', json: importResultSchema },
      },
      handler: async (req, res) => {
        const imported = await receiveUpload(req, storage, {
          fileField: 'file',
          missing: 'is required: send the CSV as multipart/form-data field "file"',
          reserve: async () => ({
            ...(await run(ReserveContactImportDocument, {}, req)).reserveContactImport,
            contentType: 'text/csv',
          }),
          commit: async (slot, fields) =>
            (await run(ImportContactsDocument, { uploadId: slot.uploadId, mapping: fields.mapping ?? null }, req))
              .importContacts,
          cancel: (slot) => run(CancelContactImportDocument, { uploadId: slot.uploadId }, req),
        });
        res.json(imported);
      },
    },
  ];
}
