import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import type { Request } from 'express';
import { stringify } from 'csv-stringify';
import { z } from 'zod';
import { spreadsheetSafe } from '#lib/data/copy-csv.js';
import { receiveUpload } from '#lib/storage/multipart-upload.js';
import { AppError } from '#lib/errors.js';
import { eventsOf } from '#lib/rest/event-stream.js';
import { booleanParam, type RestRoute } from '#lib/rest/rest.js';
import { isIdempotentReplay, type FollowOperation, type RunOperation } from '#lib/rest/run-operation.js';
import { contentDisposition } from '#lib/http/content-disposition.js';
import type { ObjectStorage } from '#lib/storage/storage.js';
import { importFormSchema, importJobSchema, importResultSchema } from './contacts.bodies.js';
import {
  CancelContactImportDocument,
  CancelContactImportJobDocument,
  ContactImportDocument,
  ContactImportErrorsDocument,
  type ContactImportFieldsFragment,
  ContactImportResultDocument,
  FollowContactImportDocument,
  ReserveContactImportDocument,
  StartContactImportDocument,
} from './operations.generated.js';

/** Rows of `errors.csv` per GraphQL page. */
const ERRORS_PAGE_SIZE = 1000;
const JOB_PATH = '/api/contacts/import/{id}';

/** `Prefer: respond-async` (RFC 7240) among the request's preferences. */
function prefersAsync(req: Request): boolean {
  return (req.get('prefer') ?? '')
    .split(',')
    .some((preference) => preference.split(';')[0].trim().toLowerCase() === 'respond-async');
}

/** An import job as the REST body has it: statuses in lowercase, `errors` the number of row errors. */
function jobBody(job: ContactImportFieldsFragment) {
  const { errorCount, status, ...rest } = job;
  return { ...rest, status: status.toLowerCase(), errors: errorCount };
}

/**
 * CSV import, on the platform's upload protocol (`lib/storage/uploads.ts`): the subgraph reserves the
 * upload (a staging key and IMPORT_MAX_BYTES), the file streams into that key, and one operation commits
 * it and starts the import job (the one an Idempotency-Key goes with); a request that fails before
 * cancels the reservation. The job runs in the background (pg-boss); the legacy request waits for it
 * and answers its summary, and one with `Prefer: respond-async` gets 202 and the job to follow.
 */
export function contactImportRoutes(run: RunOperation, follow: FollowOperation, storage: ObjectStorage): RestRoute[] {
  return [
    {
      method: 'post',
      path: '/api/contacts/import',
      summary:
        'Import contacts from a CSV file (multipart: file, optional mapping as JSON column -> field); with Prefer: respond-async, in the background',
      doc: {
        operationId: 'importContacts',
        tag: 'contacts',
        multipart: importFormSchema,
        query: z.object({
          dryRun: z
            .enum(['true', 'false'])
            .optional()
            .meta({ description: 'true: check every row and answer what would happen, writing nothing' }),
        }),
        answer: {
          status: 200,
          description: 'What the import did, row by row (the request waited for it)',
          json: importResultSchema,
        },
        alsoAnswers: [
          {
            status: 202,
            description: 'With `Prefer: respond-async`: the import was queued; follow it at `Location`',
            json: importJobSchema,
            headers: z.object({
              Location: z.string().meta({ description: 'The import: /api/contacts/import/{id}' }),
              'Preference-Applied': z.literal('respond-async'),
            }),
          },
        ],
      },
      handler: async (req, res) => {
        const dryRun = booleanParam('dryRun', req.query.dryRun) ?? false;
        const background = prefersAsync(req);
        const started = await receiveUpload(req, storage, {
          fileField: 'file',
          missing: 'is required: send the CSV as multipart/form-data field "file"',
          reserve: async () => ({
            ...(await run(ReserveContactImportDocument, {}, req, { withoutIdempotencyKey: true })).reserveContactImport,
            contentType: 'text/csv',
          }),
          commit: async (slot, fields, received) =>
            (
              await run(
                StartContactImportDocument,
                { uploadId: slot.uploadId, mapping: mappingObject(fields.mapping), dryRun, sha256: received.sha256 },
                req,
              )
            ).startContactImport,
          cancel: (slot) =>
            run(CancelContactImportDocument, { uploadId: slot.uploadId }, req, { withoutIdempotencyKey: true }),
          replayed: () => isIdempotentReplay(req),
        });
        if (!background) {
          // The legacy answer waits for the job; an Idempotency-Key stands for the job started, so a
          // retry waits for the same job and answers the same summary.
          const { contactImportResult } = await run(ContactImportResultDocument, { id: started.id }, req, {
            lookup: 'Contact import',
          });
          res.json(contactImportResult);
          return;
        }
        res
          .status(202)
          .set({ location: JOB_PATH.replace('{id}', started.id), 'preference-applied': 'respond-async' })
          .json(jobBody(started));
      },
    },
    {
      method: 'get',
      path: '/api/contacts/import/:id',
      summary: 'An import: where it stands and what it did so far',
      cacheControl: 'no-store',
      doc: {
        operationId: 'getContactImport',
        tag: 'contacts',
        params: { id: 'Import id' },
        answer: { status: 200, description: 'The import', json: importJobSchema },
      },
      eventStream: {
        description:
          "With `Accept: text/event-stream`: the import as server-sent events, `event: import` with `data:` the job's body " +
          'as the JSON answer has it: once as it is, then each time it changes (at least once a second while it runs), ' +
          'ending after succeeded, failed or cancelled. A comment every 15 s keeps it open; a client that reads nothing ' +
          'for 30 s is disconnected; at shutdown it ends early (ask again).',
        events: async (req) => {
          const answers = await follow(FollowContactImportDocument, { id: req.params.id }, req);
          return eventsOf(answers, ({ contactImport }) => ({ event: 'import', data: jobBody(contactImport) }));
        },
      },
      handler: async (req, res) => {
        const { contactImport } = await run(ContactImportDocument, { id: req.params.id }, req, {
          lookup: 'Contact import',
        });
        res.json(jobBody(contactImport));
      },
    },
    {
      method: 'delete',
      path: '/api/contacts/import/:id',
      summary: 'Cancel an import; the batches written before stay',
      doc: {
        operationId: 'cancelContactImport',
        tag: 'contacts',
        params: { id: 'Import id' },
        answer: {
          status: 200,
          description: 'The import, cancelled (or as it ended, when it was over already)',
          json: importJobSchema,
        },
      },
      handler: async (req, res) => {
        const { cancelContactImportJob } = await run(CancelContactImportJobDocument, { id: req.params.id }, req, {
          lookup: 'Contact import',
        });
        res.json(jobBody(cancelContactImportJob));
      },
    },
    {
      method: 'get',
      path: '/api/contacts/import/:id/errors.csv',
      summary: 'The rows an import rejected: row number, column and reason',
      cacheControl: 'no-store',
      doc: {
        operationId: 'getContactImportErrors',
        tag: 'contacts',
        params: { id: 'Import id' },
        answer: {
          status: 200,
          description: 'CSV with a header row: row, column, message (the header being row 1 of the imported file)',
          content: { 'text/csv': z.string() },
        },
      },
      handler: async (req, res) => {
        const id = req.params.id as string;
        const fetchPage = async (after: string | null) =>
          (
            await run(ContactImportErrorsDocument, { id, first: ERRORS_PAGE_SIZE, after }, req, {
              lookup: 'Contact import',
            })
          ).contactImport.errors;
        // The first page is read before any byte is sent, so an unknown import still gets a problem body.
        const firstPage = await fetchPage(null);
        res.status(200).set({
          'content-type': 'text/csv; charset=utf-8',
          'content-disposition': contentDisposition(`import-${id}-errors.csv`),
          'x-content-type-options': 'nosniff',
        });
        async function* rows() {
          for (let page = firstPage; ;) {
            // A column name or a message quotes the file, which anyone could have written: as the
            // export, the file leaves no cell a spreadsheet would run as a formula.
            for (const error of page.nodes)
              yield [String(error.row), spreadsheetSafe(error.column ?? ''), spreadsheetSafe(error.message)];
            if (!page.pageInfo.hasNextPage) return;
            page = await fetchPage(page.pageInfo.endCursor ?? null);
          }
        }
        const csv = stringify({ header: true, columns: ['row', 'column', 'message'], record_delimiter: '\r\n' });
        await pipeline(Readable.from(rows()), csv, res);
      },
    },
  ];
}

/** The multipart `mapping` field (JSON text) as the object the operation takes. */
function mappingObject(text: string | undefined): Record<string, unknown> | null {
  if (text === undefined || !text.trim()) return null;
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    parsed = undefined;
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed))
    throw AppError.badInput('mapping', 'must be a JSON object from CSV column to contact field');
  return parsed as Record<string, unknown>;
}
