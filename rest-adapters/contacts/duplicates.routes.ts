import { z } from 'zod';
import { pageBody } from '#lib/data/pagination.js';
import { pageQuery } from '#lib/rest/rest-schemas.js';
import { restEnum } from '#lib/rest/rest-enums.js';
import { numberParam, type RestRoute } from '#lib/rest/rest.js';
import type { RunOperation } from '#lib/rest/run-operation.js';
import { contactSchema } from './contacts.bodies.js';
import { ContactDuplicatePageDocument, ContactDuplicatesDocument } from './operations.generated.js';

const reasons = z
  .array(z.enum(['email', 'phone', 'name', 'company']))
  .meta({ description: 'What the two have in common (company only strengthens another reason)' });
const score = z.number().min(0).max(1).meta({ description: 'How likely the two are one person, from 0 to 1' });

export const duplicateSchema = z
  .object({ contact: contactSchema, score, reasons })
  .meta({ id: 'ContactDuplicate', description: 'A live contact likely to be the same person' });

export const duplicatePairSchema = z
  .object({ contacts: z.array(contactSchema).meta({ description: 'The two contacts' }), score, reasons })
  .meta({ id: 'ContactDuplicatePair', description: 'Two live contacts likely to be the same person' });

const duplicateList = z
  .object({
    data: z.array(duplicateSchema),
    page: z.int().meta({ description: 'Always 1: the list is one page' }),
    limit: z.int(),
    total: z.int().meta({ description: 'Duplicates listed' }),
  })
  .meta({ id: 'ContactDuplicateList' });

const pairPage = z
  .object({ data: z.array(duplicatePairSchema), page: z.int(), limit: z.int(), total: z.int() })
  .meta({ id: 'ContactDuplicatePairPage' });

/** Duplicate detection; every rule (normalising, scoring, thresholds) is the contacts subgraph's. */
export function duplicateRoutes(run: RunOperation): RestRoute[] {
  return [
    {
      method: 'get',
      path: '/api/contacts/duplicates',
      summary: 'Likely pairs of duplicates over the whole book, best first (page, limit)',
      list: 'pages',
      doc: {
        operationId: 'listContactDuplicates',
        tag: 'contacts',
        query: pageQuery,
        answer: { status: 200, description: 'A page of likely pairs', json: pairPage },
      },
      handler: async (req, res) => {
        const { contactDuplicatePage: page } = await run(
          ContactDuplicatePageDocument,
          { page: numberParam(req.query.page), limit: numberParam(req.query.limit) },
          req,
        );
        const items = page.items.map((pair) => ({ ...pair, reasons: restEnum(pair.reasons) }));
        res.json(pageBody({ ...page, items }));
      },
    },
    {
      method: 'get',
      path: '/api/contacts/:id/duplicates',
      summary: 'Live contacts likely to be the same person as this one, best first (limit, at most 50)',
      doc: {
        operationId: 'listDuplicatesOfContact',
        tag: 'contacts',
        params: { id: 'Contact id' },
        query: z.object({
          limit: z.coerce.number().int().min(1).max(50).optional().meta({ description: 'Default 10' }),
        }),
        answer: { status: 200, description: 'The likely duplicates', json: duplicateList },
      },
      handler: async (req, res) => {
        const limit = numberParam(req.query.limit) ?? 10;
        const { contact } = await run(ContactDuplicatesDocument, { id: req.params.id, first: limit }, req, {
          lookup: 'Contact',
        });
        const data = (contact.duplicates ?? []).map((duplicate) => ({
          ...duplicate,
          reasons: restEnum(duplicate.reasons),
        }));
        res.json({ data, page: 1, limit, total: data.length });
      },
    },
  ];
}
