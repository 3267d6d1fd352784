import { z } from 'zod';
import { idSchema, instantSchema } from '#lib/rest/rest-schemas.js';
import { jsonBody, type RestRoute } from '#lib/rest/rest.js';
import type { RunOperation } from '#lib/rest/run-operation.js';
import { contactSchema } from './contacts.bodies.js';
import { MergeContactsDocument, UndoContactMergeDocument } from './operations.generated.js';

const source = (field: string) =>
  idSchema.optional().meta({ description: `The contact whose ${field} the survivor takes` });

export const mergeInputSchema = z
  .strictObject({
    mergeIds: z.array(z.string()).meta({
      description:
        "The contacts merged into this one (1 to 49), in the order their values fill the survivor's empty fields",
    }),
    fieldSources: z
      .strictObject({
        firstName: source('first name'),
        lastName: source('last name'),
        email: source('e-mail address'),
        phone: source('phone number'),
        company: source('company'),
      })
      .optional()
      .meta({ description: 'Field -> the contact (this one or one of mergeIds) whose value the survivor takes' }),
    dryRun: z.boolean().optional().meta({ description: 'True: answer the survivor as it would be, and write nothing' }),
  })
  .meta({ id: 'MergeInput' });

export const mergeSchema = z
  .object({
    id: idSchema.meta({ description: 'Id of the merge, to undo it' }),
    survivorId: idSchema,
    mergedIds: z.array(idSchema),
    createdAt: instantSchema,
    undoneAt: instantSchema.nullable().meta({ description: 'When it was undone; null while it stands' }),
  })
  .meta({ id: 'ContactMerge', description: 'A merge of contacts into one that survives' });

const mergedSchema = contactSchema
  .extend({ merge: mergeSchema.nullable().meta({ description: 'The merge; null on a dry run, which writes nothing' }) })
  .meta({ id: 'MergedContact', description: 'The survivor as it is after the merge, and the merge' });

const undoneSchema = z
  .object({ merge: mergeSchema, survivor: contactSchema, restored: z.array(contactSchema) })
  .meta({ id: 'UndoneMerge', description: 'The merge undone, the survivor, and the contacts back' });

/** Merging contacts and undoing a merge; every rule (refusals, what moves, what comes back) is the subgraph's. */
export function mergeRoutes(run: RunOperation): RestRoute[] {
  return [
    {
      method: 'post',
      path: '/api/contacts/merges/:mergeId/undo',
      summary: 'Undo a merge within 30 days (a second undo: 409)',
      doc: {
        operationId: 'undoContactMerge',
        tag: 'contacts',
        params: { mergeId: 'Merge id' },
        answer: { status: 200, description: 'The merge undone', json: undoneSchema },
        problems: [409],
      },
      handler: async (req, res) => {
        const { undoContactMerge } = await run(UndoContactMergeDocument, { id: req.params.mergeId }, req);
        res.json(undoContactMerge);
      },
    },
    {
      method: 'post',
      path: '/api/contacts/:id/merge',
      summary: 'Merge contacts into this one ({ mergeIds, fieldSources, dryRun })',
      doc: {
        operationId: 'mergeContacts',
        tag: 'contacts',
        params: { id: 'The contact that survives' },
        body: mergeInputSchema,
        answer: { status: 200, description: 'The survivor and the merge', json: mergedSchema },
        problems: [409],
      },
      handler: async (req, res) => {
        const body = jsonBody(req) as z.infer<typeof mergeInputSchema>;
        const { mergeContacts } = await run(
          MergeContactsDocument,
          { input: { survivorId: req.params.id, ...body } },
          req,
        );
        res.json({ ...mergeContacts.contact, merge: mergeContacts.merge });
      },
    },
  ];
}
