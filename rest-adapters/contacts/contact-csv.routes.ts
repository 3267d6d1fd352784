import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { stringify } from 'csv-stringify';
import { z } from 'zod';
import { stringParam, type RestRoute, type RunOperation } from '../../lib/rest/rest.js';
import { contentDisposition } from '../../lib/storage/storage.js';
import { ContactScrollDocument, type ContactScrollQuery } from './operations.generated.js';

const EXPORT_COLUMNS = [
  'id',
  'firstName',
  'lastName',
  'email',
  'phone',
  'company',
  'tags',
  'createdAt',
  'updatedAt',
] as const;
const EXPORT_PAGE_SIZE = 1000;

/**
 * A spreadsheet runs a cell that starts with one of these as a formula; a leading apostrophe
 * makes it text (OWASP "CSV injection").
 */
const FORMULA_START = /^[=+\-@\t\r]/;
const neutralizeFormula = (value: string) => (FORMULA_START.test(value) ? `'${value}` : value);

/**
 * CSV in and out. Import, on the platform's upload protocol (`lib/storage/uploads.ts`): the subgraph reserves
 * the upload (a staging key and IMPORT_MAX_BYTES), the file streams into that key, and one operation
 * commits and imports it (rules, validation and batches are the subgraph's); a request that fails
 * before cancels the reservation. Export: pages of a keyset walk through
 * GraphQL are written as they come, so memory does not grow with the number of contacts.
 */
export function contactCsvRoutes(run: RunOperation): RestRoute[] {
  return [
    {
      method: 'get',
      path: '/api/contacts/export',
      summary: 'Export contacts as CSV (optional search)',
      doc: {
        operationId: 'exportContacts',
        tag: 'contacts',
        query: z.object({
          search: z.string().optional().meta({ description: 'Export only the contacts this full-text search finds' }),
        }),
        answer: {
          status: 200,
          description: `CSV with a header row: ${EXPORT_COLUMNS.join(', ')} (tags joined with ;)`,
          content: { 'text/csv': z.string() },
        },
      },
      handler: async (req, res) => {
        const search = stringParam(req.query.search);
        const fetchPage = async (after: string | null) =>
          (await run(ContactScrollDocument, { first: EXPORT_PAGE_SIZE, after, search }, req)).contactScroll;
        // The first page is read before any byte is sent, so a bad request still gets a problem body.
        const firstPage = await fetchPage(null);
        res.status(200).set({
          'content-type': 'text/csv; charset=utf-8',
          'content-disposition': contentDisposition('contacts.csv'),
          'cache-control': 'no-store',
          'x-content-type-options': 'nosniff',
        });
        async function* rows() {
          for (let page = firstPage; ;) {
            // The next page is on its way while this one is written.
            const next = page.pageInfo.hasNextPage ? fetchPage(page.pageInfo.endCursor) : null;
            next?.catch(() => undefined);
            for (const contact of page.nodes) yield toRow(contact);
            if (!next) return;
            page = await next;
          }
        }
        const csv = stringify({
          header: true,
          columns: [...EXPORT_COLUMNS],
          record_delimiter: '\r\n',
          cast: { string: neutralizeFormula },
        });
        await pipeline(Readable.from(rows()), csv, res);
      },
    },
  ];
}

function toRow(contact: NonNullable<ContactScrollQuery['contactScroll']>['nodes'][number]): string[] {
  return EXPORT_COLUMNS.map((column) => {
    if (column === 'tags') return contact.tags.join(';');
    const value = contact[column];
    return typeof value === 'string' ? value : value === null || value === undefined ? '' : JSON.stringify(value);
  });
}
